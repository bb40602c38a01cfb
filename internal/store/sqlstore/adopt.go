package sqlstore

import (
	"context"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

// AdoptServer inserts s, its ports and its create action in one
// transaction (Store.AdoptServer). The server's row is written first, so a
// duplicate id is ErrExists before any port is looked at.
func (st *Store) AdoptServer(ctx context.Context, s *lifecycle.Server, ports []store.Port, attached []store.Volume) error {
	row, err := st.prepareInsert(s)
	if err != nil {
		return err
	}
	err = st.B.Write(ctx, func(tx Tx) error {
		if err := st.insertServer(ctx, tx, row); err != nil {
			return err
		}
		for _, v := range attached {
			// Held by the reservation insertServer made: on the node already.
			res, err := tx.ExecContext(ctx, `UPDATE volumes SET status = ?, node_id = ?, attachment_id = ?,
				attachment_node = ?, updated_at = ? WHERE id = ? AND server_id = ?`,
				store.VolumeInUse, row.c.NodeID, v.AttachmentID, row.c.NodeID, codec.Time(row.c.CreatedAt), v.ID, row.c.ID)
			if err != nil {
				return st.errorf("adopt volume %s: %w", v.ID, err)
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				return st.errorf("adopt volume %s: not among server %s's volumes (%d rows, %v)", v.ID, row.c.ID, n, err)
			}
		}
		for _, p := range ports {
			p.ServerID = row.c.ID
			if p.CreatedAt.IsZero() {
				p.CreatedAt = row.c.CreatedAt
			}
			if p.ID == "" || p.NetworkID == "" || p.IP == "" {
				return st.errorf("adopt server %s: port %+v: id, network and ip are required", row.c.ID, p)
			}
			binding, err := codec.Binding(p.Binding)
			if err != nil {
				return st.errorf("adopt port %s: %w", p.ID, err)
			}
			if _, err := tx.ExecContext(ctx, QInsertPort, portArgs(p, binding)...); err != nil {
				return st.portError(p, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.Version, s.CreatedAt = row.c.Version, row.c.CreatedAt
	return nil
}

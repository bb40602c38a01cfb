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
func (st *Store) AdoptServer(ctx context.Context, s *lifecycle.Server, ports []store.Port) error {
	row, err := st.prepareInsert(s)
	if err != nil {
		return err
	}
	err = st.B.Write(ctx, func(tx Tx) error {
		if err := st.insertServer(ctx, tx, row); err != nil {
			return err
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

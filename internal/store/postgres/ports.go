package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

const portCols = "id, server_id, network_id, ip, mac, vif_node, created_at, binding"

// CreatePort inserts p (a zero CreatedAt is taken as now). ErrAddressInUse
// when (NetworkID, IP) is taken; ErrExists when the id is taken or the
// server already has a port on that network; ErrNotFound when the server
// is unknown.
func (st *Store) CreatePort(ctx context.Context, p store.Port) error {
	if p.ID == "" || p.ServerID == "" || p.NetworkID == "" || p.IP == "" {
		return fmt.Errorf("postgres: create port %+v: id, server, network and ip are required", p)
	}
	if p.CreatedAt.IsZero() {
		p.CreatedAt = time.Now()
	}
	binding, err := codec.Binding(p.Binding)
	if err != nil {
		return fmt.Errorf("postgres: create port %s: %w", p.ID, err)
	}
	err = st.fenced(ctx, func(q executor) error {
		_, err := q.Exec(ctx, "INSERT INTO ports ("+portCols+") VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
			p.ID, p.ServerID, p.NetworkID, p.IP, p.MAC, p.VIFNode, codec.TimeNN(p.CreatedAt), binding)
		return err
	})
	if err == nil || errors.Is(err, store.ErrFenced) {
		return err
	}
	switch code, name := constraint(err); {
	case code == unique && name == "ports_network_ip":
		return fmt.Errorf("address %s on network %s: %w", p.IP, p.NetworkID, store.ErrAddressInUse)
	case code == unique && name == "ports_pkey":
		return fmt.Errorf("port %s: %w", p.ID, store.ErrExists)
	case code == unique && name == "ports_server_network":
		return fmt.Errorf("port of server %s on network %s: %w", p.ServerID, p.NetworkID, store.ErrExists)
	case code == foreignKey:
		return fmt.Errorf("server %s of port %s: %w", p.ServerID, p.ID, store.ErrNotFound)
	}
	return fmt.Errorf("postgres: create port %s: %w", p.ID, err)
}

func scanPort(sc codec.Scanner) (store.Port, error) {
	var p store.Port
	var created sql.NullString
	var binding string
	if err := sc.Scan(&p.ID, &p.ServerID, &p.NetworkID, &p.IP, &p.MAC, &p.VIFNode, &created, &binding); err != nil {
		return p, err
	}
	var err error
	if p.CreatedAt, err = codec.ParseTime(created); err != nil {
		return p, err
	}
	if p.Binding, err = codec.ParseBinding(binding); err != nil {
		return p, fmt.Errorf("binding of port %s: %w", p.ID, err)
	}
	return p, nil
}

func (st *Store) queryPorts(ctx context.Context, q string, args ...any) ([]store.Port, error) {
	rows, err := st.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: ports: %w", err)
	}
	defer rows.Close()
	var out []store.Port
	for rows.Next() {
		p, err := scanPort(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: ports: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: ports: %w", err)
	}
	return out, nil
}

// Ports lists a server's ports by creation (nil when none).
func (st *Store) Ports(ctx context.Context, serverID string) ([]store.Port, error) {
	out, err := st.queryPorts(ctx, "SELECT "+portCols+" FROM ports WHERE server_id = $1 ORDER BY created_at, id", serverID)
	if err != nil {
		return nil, fmt.Errorf("ports of %s: %w", serverID, err)
	}
	return out, nil
}

// PortsOn lists the ports of many servers (servers without ports are absent
// from the map), each server's ports by creation.
func (st *Store) PortsOn(ctx context.Context, serverIDs []string) (map[string][]store.Port, error) {
	out := make(map[string][]store.Port)
	if len(serverIDs) == 0 {
		return out, nil
	}
	ports, err := st.queryPorts(ctx, "SELECT "+portCols+" FROM ports WHERE server_id = ANY($1) ORDER BY server_id, created_at, id", serverIDs)
	if err != nil {
		return nil, fmt.Errorf("ports on servers: %w", err)
	}
	for _, p := range ports {
		out[p.ServerID] = append(out[p.ServerID], p)
	}
	return out, nil
}

// GetPort returns one port. ErrNotFound when unknown.
func (st *Store) GetPort(ctx context.Context, id string) (store.Port, error) {
	p, err := scanPort(st.pool.QueryRow(ctx, "SELECT "+portCols+" FROM ports WHERE id = $1", id))
	if nf := notFound(err, "port "+id); nf != nil {
		return store.Port{}, nf
	}
	if err != nil {
		return store.Port{}, fmt.Errorf("postgres: get port %s: %w", id, err)
	}
	return p, nil
}

// SetPortVIF records the node the port's VIF is attached to ("" =
// detached). Idempotent. ErrNotFound when the port is unknown.
func (st *Store) SetPortVIF(ctx context.Context, portID, node string) error {
	return st.execOne(ctx, "port "+portID, "UPDATE ports SET vif_node = $1 WHERE id = $2", node, portID)
}

// BindPort records the port's VIF node, MAC and binding in one write.
// Idempotent. ErrNotFound when the port is unknown.
func (st *Store) BindPort(ctx context.Context, portID, node, mac string, b store.Binding) error {
	binding, err := codec.Binding(b)
	if err != nil {
		return fmt.Errorf("postgres: bind port %s: %w", portID, err)
	}
	return st.execOne(ctx, "port "+portID, "UPDATE ports SET vif_node = $1, mac = $2, binding = $3 WHERE id = $4",
		node, mac, binding, portID)
}

// execOne runs a single-statement write that must touch a row:
// ErrNotFound (wrapped with what) when it touched none.
func (st *Store) execOne(ctx context.Context, what, q string, args ...any) error {
	return st.fenced(ctx, func(ex executor) error {
		tag, err := ex.Exec(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("postgres: %s: %w", what, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("%s: %w", what, store.ErrNotFound)
		}
		return nil
	})
}

// DeletePort frees a port and its address. Idempotent: an unknown port is
// not an error.
func (st *Store) DeletePort(ctx context.Context, portID string) error {
	return st.fenced(ctx, func(q executor) error {
		if _, err := q.Exec(ctx, "DELETE FROM ports WHERE id = $1", portID); err != nil {
			return fmt.Errorf("postgres: delete port %s: %w", portID, err)
		}
		return nil
	})
}

// UsedAddresses lists the allocated addresses of a network (any order).
func (st *Store) UsedAddresses(ctx context.Context, networkID string) ([]string, error) {
	rows, err := st.pool.Query(ctx, "SELECT ip FROM ports WHERE network_id = $1", networkID)
	if err != nil {
		return nil, fmt.Errorf("postgres: used addresses of %s: %w", networkID, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: used addresses of %s: %w", networkID, err)
	}
	if len(out) == 0 {
		return nil, nil // as the SQLite store answers
	}
	return out, nil
}

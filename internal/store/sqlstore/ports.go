package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

// The port writes, exported so that SQLite prepares them at Open.
const (
	portCols    = "id, server_id, network_id, ip, mac, vif_node, created_at, binding, neutron_id, user_port, slot"
	QInsertPort = "INSERT INTO ports (" + portCols + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	QSetPortVIF = "UPDATE ports SET vif_node = ? WHERE id = ?"
	QBindPort   = "UPDATE ports SET vif_node = ?, mac = ?, binding = ? WHERE id = ?"
	QDeletePort = "DELETE FROM ports WHERE id = ?"
	qNeutron    = "UPDATE ports SET neutron_id = ?, ip = ?, mac = ? WHERE id = ?"
)

// CreatePort inserts p (a zero CreatedAt is taken as now). ErrAddressInUse
// when (NetworkID, IP) is taken; ErrExists when the id is taken or the
// server already has a port on that network in that slot; ErrNotFound when the server
// is unknown. Only a row written before Neutron's create may lack an
// address, and then its MAC too (RecordNeutronPort fills both).
func (st *Store) CreatePort(ctx context.Context, p store.Port) error {
	if p.ID == "" || p.ServerID == "" || p.NetworkID == "" || (p.IP == "" && p.MAC != "") {
		return st.errorf("create port %+v: id, server, network and ip are required", p)
	}
	if p.CreatedAt.IsZero() {
		p.CreatedAt = time.Now()
	}
	binding, err := codec.Binding(p.Binding)
	if err != nil {
		return st.errorf("create port %s: %w", p.ID, err)
	}
	_, err = st.B.Exec(ctx, QInsertPort, portArgs(p, binding)...)
	if err == nil || errors.Is(err, store.ErrFenced) {
		return err
	}
	return st.portError(p, err)
}

// portArgs are QInsertPort's arguments for p (binding encoded).
func portArgs(p store.Port, binding string) []any {
	return []any{p.ID, p.ServerID, p.NetworkID, p.IP, p.MAC, p.VIFNode, codec.TimeNN(p.CreatedAt), binding, p.NeutronID, p.UserPort, p.Slot}
}

func (st *Store) portError(p store.Port, err error) error {
	if st.B.ForeignKey(err) {
		return fmt.Errorf("server %s of port %s: %w", p.ServerID, p.ID, store.ErrNotFound)
	}
	switch name, _ := st.B.Unique(err); name {
	case "ports.network_id, ports.ip", "ports_network_ip":
		return fmt.Errorf("address %s on network %s: %w", p.IP, p.NetworkID, store.ErrAddressInUse)
	case "ports.id", "ports_pkey":
		return fmt.Errorf("port %s: %w", p.ID, store.ErrExists)
	case "ports.server_id, ports.network_id, ports.slot", "ports_server_network_slot":
		return fmt.Errorf("port of server %s on network %s: %w", p.ServerID, p.NetworkID, store.ErrExists)
	}
	return st.errorf("create port %s: %w", p.ID, err)
}

func scanPort(sc codec.Scanner) (store.Port, error) {
	var p store.Port
	var created sql.NullString
	var binding string
	if err := sc.Scan(&p.ID, &p.ServerID, &p.NetworkID, &p.IP, &p.MAC, &p.VIFNode, &created, &binding, &p.NeutronID, &p.UserPort, &p.Slot); err != nil {
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

func (st *Store) collectPorts(rows *sql.Rows) ([]store.Port, error) {
	defer rows.Close()
	var out []store.Port
	for rows.Next() {
		p, err := scanPort(rows)
		if err != nil {
			return nil, st.errorf("ports: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, st.errorf("ports: %w", err)
	}
	return out, nil
}

// Ports lists a server's ports by creation (nil when none).
func (st *Store) Ports(ctx context.Context, serverID string) ([]store.Port, error) {
	rows, err := st.B.Query(ctx, "SELECT "+portCols+" FROM ports WHERE server_id = ?", serverID)
	if err != nil {
		return nil, st.errorf("ports of %s: %w", serverID, err)
	}
	ports, err := st.collectPorts(rows)
	byCreation(ports)
	return ports, err
}

// byCreation orders one server's ports by creation, then id. Sorted here
// rather than by an ORDER BY: SQLite's sorter cost more than the lookup
// (BenchmarkPortsOn, a page of 50 servers' ports: 366-413 us of CPU with
// it, 314-324 without), and a server has a port or two.
func byCreation(ports []store.Port) {
	slices.SortFunc(ports, func(a, b store.Port) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// InChunk bounds the IN list of one query (PortsOn, the volumes of many
// servers).
const InChunk = 500

// PortsOn lists the ports of many servers (servers without ports are absent
// from the map), each server's ports by creation.
func (st *Store) PortsOn(ctx context.Context, serverIDs []string) (map[string][]store.Port, error) {
	out := make(map[string][]store.Port)
	for len(serverIDs) > 0 {
		chunk := serverIDs[:min(len(serverIDs), InChunk)]
		serverIDs = serverIDs[len(chunk):]
		in, args := inList(chunk)
		rows, err := st.B.Query(ctx, "SELECT "+portCols+" FROM ports WHERE server_id IN ("+in+")", args...)
		if err != nil {
			return nil, st.errorf("ports on servers: %w", err)
		}
		ports, err := st.collectPorts(rows)
		if err != nil {
			return nil, err
		}
		for _, p := range ports {
			out[p.ServerID] = append(out[p.ServerID], p)
		}
	}
	for _, ports := range out {
		byCreation(ports)
	}
	return out, nil
}

// GetPort returns one port. ErrNotFound when unknown.
func (st *Store) GetPort(ctx context.Context, id string) (store.Port, error) {
	p, err := scanPort(st.B.QueryRow(ctx, "SELECT "+portCols+" FROM ports WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Port{}, fmt.Errorf("port %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Port{}, st.errorf("get port %s: %w", id, err)
	}
	return p, nil
}

// SetPortVIF records the node the port's VIF is attached to ("" =
// detached). Idempotent. ErrNotFound when the port is unknown.
func (st *Store) SetPortVIF(ctx context.Context, portID, node string) error {
	return st.ExecOne(ctx, "port "+portID, QSetPortVIF, node, portID)
}

// BindPort records the port's VIF node, MAC and binding in one write.
// Idempotent. ErrNotFound when the port is unknown.
func (st *Store) BindPort(ctx context.Context, portID, node, mac string, b store.Binding) error {
	binding, err := codec.Binding(b)
	if err != nil {
		return st.errorf("bind port %s: %w", portID, err)
	}
	return st.ExecOne(ctx, "port "+portID, QBindPort, node, mac, binding, portID)
}

// DeletePort frees a port and its address. Idempotent: an unknown port is
// not an error.
func (st *Store) DeletePort(ctx context.Context, portID string) error {
	if _, err := st.B.Exec(ctx, QDeletePort, portID); err != nil {
		return st.wrap("delete port "+portID, err)
	}
	return nil
}

// RecordNeutronPort records Neutron's id, address and MAC of a port row.
// Idempotent. ErrAddressInUse when another row holds the address on the
// network; ErrNotFound when the row is unknown.
func (st *Store) RecordNeutronPort(ctx context.Context, portID, neutronID, ip, mac string) error {
	err := st.ExecOne(ctx, "port "+portID, qNeutron, neutronID, ip, mac, portID)
	if err == nil || errors.Is(err, store.ErrFenced) || errors.Is(err, store.ErrNotFound) {
		return err
	}
	return st.portError(store.Port{ID: portID, IP: ip}, err)
}

// UsedAddresses lists the allocated addresses of a network (any order).
func (st *Store) UsedAddresses(ctx context.Context, networkID string) ([]string, error) {
	rows, err := st.B.Query(ctx, "SELECT ip FROM ports WHERE network_id = ? AND ip <> ''", networkID)
	if err != nil {
		return nil, st.errorf("used addresses of %s: %w", networkID, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var ip string
		if err := rows.Scan(&ip); err != nil {
			return nil, st.errorf("used addresses of %s: %w", networkID, err)
		}
		out = append(out, ip)
	}
	return out, rows.Err()
}

-- More than one port of a server on one network (os-interface attaches a
-- second one, as Nova does). slot is '' for the ports of the build's
-- networks, one per network as before, and the port's own id for an
-- interface attached later; the uniqueness moves to (server, network,
-- slot). The table is rebuilt because SQLite cannot drop a table
-- constraint.
CREATE TABLE ports_0015 (
    id          TEXT NOT NULL PRIMARY KEY,
    server_id   TEXT NOT NULL REFERENCES servers (id),
    network_id  TEXT NOT NULL,
    ip          TEXT NOT NULL,
    mac         TEXT NOT NULL,
    vif_node    TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    binding     TEXT NOT NULL DEFAULT '',
    neutron_id  TEXT NOT NULL DEFAULT '',
    user_port   BOOLEAN NOT NULL DEFAULT FALSE,
    slot        TEXT NOT NULL DEFAULT '',
    CONSTRAINT ports_server_network_slot UNIQUE (server_id, network_id, slot)
);
INSERT INTO ports_0015 (id, server_id, network_id, ip, mac, vif_node, created_at, binding, neutron_id, user_port)
    SELECT id, server_id, network_id, ip, mac, vif_node, created_at, binding, neutron_id, user_port FROM ports;
DROP TABLE ports;
ALTER TABLE ports_0015 RENAME TO ports;
CREATE UNIQUE INDEX ports_network_ip ON ports (network_id, ip) WHERE ip <> '';

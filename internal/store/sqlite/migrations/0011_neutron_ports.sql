-- Ports in Neutron (network.backend: neutron). neutron_id is Neutron's port
-- id, which is the VIF id given to Ironic; '' until Neutron's create is
-- recorded (the row is written first, so a retry finds the port again by
-- device_id, network and name). user_port marks a user's pre-created port:
-- released on delete, never deleted. Such a row has no address until
-- Neutron gives one, so the (network, ip) fence covers addresses only; the
-- table is rebuilt because SQLite cannot drop a table constraint.
CREATE TABLE ports_0011 (
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
    CONSTRAINT ports_server_network UNIQUE (server_id, network_id)
);
INSERT INTO ports_0011 (id, server_id, network_id, ip, mac, vif_node, created_at, binding)
    SELECT id, server_id, network_id, ip, mac, vif_node, created_at, binding FROM ports;
DROP TABLE ports;
ALTER TABLE ports_0011 RENAME TO ports;
CREATE UNIQUE INDEX ports_network_ip ON ports (network_id, ip) WHERE ip <> '';

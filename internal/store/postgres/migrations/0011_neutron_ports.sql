-- Ports in Neutron (network.backend: neutron). neutron_id is Neutron's port
-- id, which is the VIF id given to Ironic; '' until Neutron's create is
-- recorded (the row is written first, so a retry finds the port again by
-- device_id, network and name). user_port marks a user's pre-created port:
-- released on delete, never deleted. Such a row has no address until
-- Neutron gives one, so the (network, ip) fence covers addresses only.
ALTER TABLE ports ADD COLUMN neutron_id TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE ports ADD COLUMN user_port BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE ports DROP CONSTRAINT ports_network_ip;
CREATE UNIQUE INDEX ports_network_ip ON ports (network_id, ip) WHERE ip <> '';

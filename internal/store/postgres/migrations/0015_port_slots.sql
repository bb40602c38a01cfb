-- More than one port of a server on one network (os-interface attaches a
-- second one, as Nova does). slot is '' for the ports of the build's
-- networks, one per network as before, and the port's own id for an
-- interface attached later; the uniqueness moves to (server, network,
-- slot).
ALTER TABLE ports ADD COLUMN slot TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE ports DROP CONSTRAINT ports_server_network;
ALTER TABLE ports ADD CONSTRAINT ports_server_network_slot UNIQUE (server_id, network_id, slot);

-- The Ironic port or portgroup that carries a port on its node (JSON
-- store.Binding, '' when unbound).
ALTER TABLE ports ADD COLUMN binding TEXT NOT NULL DEFAULT '';

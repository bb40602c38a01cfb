-- The Ironic port or portgroup that carries a port on its node (JSON
-- store.Binding, '' when unbound). Numbered 0004: 0003 is left to the
-- keypairs table being built alongside.
ALTER TABLE ports ADD COLUMN binding TEXT NOT NULL DEFAULT '';

-- ingot schema, version 19: the flavors' writes move the admin revision too,
-- so that a replica may keep the flavors it renders servers with until it
-- moves, as it keeps the zones. (IF NOT EXISTS: a database rewound to an
-- older version by hand re-runs it.)
CREATE TRIGGER IF NOT EXISTS flavors_rev_insert AFTER INSERT ON flavors BEGIN UPDATE admin_revision SET rev = rev + 1; END;
CREATE TRIGGER IF NOT EXISTS flavors_rev_update AFTER UPDATE ON flavors BEGIN UPDATE admin_revision SET rev = rev + 1; END;
CREATE TRIGGER IF NOT EXISTS flavors_rev_delete AFTER DELETE ON flavors BEGIN UPDATE admin_revision SET rev = rev + 1; END;

-- ingot schema, version 17: one counter that every write to the services,
-- the aggregates or the aggregate hosts bumps (triggers, so no writer can
-- forget it), so that a replica may keep the availability zones it derived
-- from them until the counter moves. (IF NOT EXISTS: a database rewound to
-- an older version by hand re-runs it.)
CREATE TABLE IF NOT EXISTS admin_revision (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    rev  INTEGER NOT NULL DEFAULT 0
);
INSERT INTO admin_revision (id) VALUES (1) ON CONFLICT (id) DO NOTHING;
CREATE TRIGGER IF NOT EXISTS services_rev_insert AFTER INSERT ON services BEGIN UPDATE admin_revision SET rev = rev + 1; END;
CREATE TRIGGER IF NOT EXISTS services_rev_update AFTER UPDATE ON services BEGIN UPDATE admin_revision SET rev = rev + 1; END;
CREATE TRIGGER IF NOT EXISTS services_rev_delete AFTER DELETE ON services BEGIN UPDATE admin_revision SET rev = rev + 1; END;
CREATE TRIGGER IF NOT EXISTS aggregates_rev_insert AFTER INSERT ON aggregates BEGIN UPDATE admin_revision SET rev = rev + 1; END;
CREATE TRIGGER IF NOT EXISTS aggregates_rev_update AFTER UPDATE ON aggregates BEGIN UPDATE admin_revision SET rev = rev + 1; END;
CREATE TRIGGER IF NOT EXISTS aggregates_rev_delete AFTER DELETE ON aggregates BEGIN UPDATE admin_revision SET rev = rev + 1; END;
CREATE TRIGGER IF NOT EXISTS aggregate_hosts_rev_insert AFTER INSERT ON aggregate_hosts BEGIN UPDATE admin_revision SET rev = rev + 1; END;
CREATE TRIGGER IF NOT EXISTS aggregate_hosts_rev_update AFTER UPDATE ON aggregate_hosts BEGIN UPDATE admin_revision SET rev = rev + 1; END;
CREATE TRIGGER IF NOT EXISTS aggregate_hosts_rev_delete AFTER DELETE ON aggregate_hosts BEGIN UPDATE admin_revision SET rev = rev + 1; END;

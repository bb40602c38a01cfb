-- ingot schema, version 18: an aggregate's or a service's id is never
-- handed out again. INTEGER PRIMARY KEY gives max(id)+1, so a deleted
-- aggregate's id came back on the next create, and a client that deleted
-- its aggregate by id a second time (a cleanup that ignores 404) removed
-- someone else's. AUTOINCREMENT keeps a high-water mark, as PostgreSQL's
-- identity does. SQLite cannot change a column, so the tables are
-- rebuilt: aggregate_hosts set aside first (dropping aggregates would
-- cascade into it), and version 17's triggers made again (they go with
-- their tables).
CREATE TABLE aggregate_hosts_0018 AS SELECT aggregate_id, host FROM aggregate_hosts;
DROP TABLE aggregate_hosts;

CREATE TABLE aggregates_0018 (
    id         INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    uuid       TEXT    NOT NULL UNIQUE,
    name       TEXT    NOT NULL UNIQUE,
    metadata   TEXT    NOT NULL DEFAULT '{}',
    created_at TEXT    NOT NULL,
    updated_at TEXT
);
INSERT INTO aggregates_0018 (id, uuid, name, metadata, created_at, updated_at)
    SELECT id, uuid, name, metadata, created_at, updated_at FROM aggregates;
DROP TABLE aggregates;
ALTER TABLE aggregates_0018 RENAME TO aggregates;

CREATE TABLE aggregate_hosts (
    aggregate_id INTEGER NOT NULL REFERENCES aggregates (id) ON DELETE CASCADE,
    host         TEXT    NOT NULL,
    PRIMARY KEY (aggregate_id, host)
);
INSERT INTO aggregate_hosts (aggregate_id, host) SELECT aggregate_id, host FROM aggregate_hosts_0018;
DROP TABLE aggregate_hosts_0018;
CREATE INDEX aggregate_hosts_host ON aggregate_hosts (host);

CREATE TABLE services_0018 (
    id              INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    uuid            TEXT    NOT NULL UNIQUE,
    host            TEXT    NOT NULL,
    binary_name     TEXT    NOT NULL,
    disabled        BOOLEAN NOT NULL DEFAULT FALSE,
    disabled_reason TEXT,
    forced_down     BOOLEAN NOT NULL DEFAULT FALSE,
    created_at      TEXT    NOT NULL,
    updated_at      TEXT    NOT NULL,
    UNIQUE (host, binary_name)
);
INSERT INTO services_0018 (id, uuid, host, binary_name, disabled, disabled_reason, forced_down, created_at, updated_at)
    SELECT id, uuid, host, binary_name, disabled, disabled_reason, forced_down, created_at, updated_at FROM services;
DROP TABLE services;
ALTER TABLE services_0018 RENAME TO services;

CREATE TRIGGER services_rev_insert AFTER INSERT ON services BEGIN UPDATE admin_revision SET rev = rev + 1; END;
CREATE TRIGGER services_rev_update AFTER UPDATE ON services BEGIN UPDATE admin_revision SET rev = rev + 1; END;
CREATE TRIGGER services_rev_delete AFTER DELETE ON services BEGIN UPDATE admin_revision SET rev = rev + 1; END;
CREATE TRIGGER aggregates_rev_insert AFTER INSERT ON aggregates BEGIN UPDATE admin_revision SET rev = rev + 1; END;
CREATE TRIGGER aggregates_rev_update AFTER UPDATE ON aggregates BEGIN UPDATE admin_revision SET rev = rev + 1; END;
CREATE TRIGGER aggregates_rev_delete AFTER DELETE ON aggregates BEGIN UPDATE admin_revision SET rev = rev + 1; END;
CREATE TRIGGER aggregate_hosts_rev_insert AFTER INSERT ON aggregate_hosts BEGIN UPDATE admin_revision SET rev = rev + 1; END;
CREATE TRIGGER aggregate_hosts_rev_update AFTER UPDATE ON aggregate_hosts BEGIN UPDATE admin_revision SET rev = rev + 1; END;
CREATE TRIGGER aggregate_hosts_rev_delete AFTER DELETE ON aggregate_hosts BEGIN UPDATE admin_revision SET rev = rev + 1; END;
-- The rebuild moved the counter; what it counts did not change, but a
-- replica re-deriving its zones once is harmless.

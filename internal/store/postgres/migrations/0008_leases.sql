-- Shard leases of the replicas (docs/DESIGN.md §2.10), PostgreSQL's form of
-- SQLite's 0008. Expiry by the server's clock (clock_timestamp()).
CREATE TABLE leases (
    shard      integer     NOT NULL PRIMARY KEY,
    holder     text        NOT NULL DEFAULT '',
    epoch      bigint      NOT NULL DEFAULT 0,
    expires_at timestamptz NOT NULL DEFAULT 'epoch'
);
CREATE INDEX leases_by_holder ON leases (holder);

CREATE TABLE replicas (
    host    text        NOT NULL PRIMARY KEY,
    seen_at timestamptz NOT NULL
);

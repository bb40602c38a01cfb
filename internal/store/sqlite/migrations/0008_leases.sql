-- Shard leases of the replicas (docs/DESIGN.md §2.10). Times are Unix
-- nanoseconds by the store's clock. A server's shard is store.ShardOf(id).
CREATE TABLE leases (
    shard      INTEGER NOT NULL PRIMARY KEY,
    holder     TEXT    NOT NULL DEFAULT '',
    epoch      INTEGER NOT NULL DEFAULT 0,
    expires_at INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX leases_by_holder ON leases (holder);

-- One heartbeat row per replica: live while seen_at is within a lease TTL.
CREATE TABLE replicas (
    host    TEXT    NOT NULL PRIMARY KEY,
    seen_at INTEGER NOT NULL
);

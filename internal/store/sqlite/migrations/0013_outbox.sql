-- The notification outbox (docs/DESIGN.md §2.13): each row is a message for
-- the bus, inserted in the transaction of the server change that causes it
-- and deleted once the broker confirmed it. seq orders the drain. (IF NOT
-- EXISTS: a database rewound to an older version by hand re-runs it.)
CREATE TABLE IF NOT EXISTS outbox (
    seq         INTEGER PRIMARY KEY,                   -- PostgreSQL: BIGINT GENERATED ALWAYS AS IDENTITY
    message_id  TEXT NOT NULL UNIQUE,
    event_type  TEXT NOT NULL,
    priority    TEXT NOT NULL,
    server_id   TEXT NOT NULL,
    body        TEXT NOT NULL,
    created_at  TEXT NOT NULL
);

-- One row: the replica draining the outbox, until expires_ns (Unix
-- nanoseconds by the holder's clock); holder '' when none.
CREATE TABLE IF NOT EXISTS outbox_drainer (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    holder      TEXT NOT NULL DEFAULT '',
    expires_ns  INTEGER NOT NULL DEFAULT 0
);
INSERT INTO outbox_drainer (id) VALUES (1) ON CONFLICT (id) DO NOTHING;

-- The notification outbox (docs/DESIGN.md §2.13): each row is a message for
-- the bus, inserted in the transaction of the server change that causes it
-- and deleted once the broker confirmed it. seq orders the drain. (IF NOT
-- EXISTS: a database rewound to an older version by hand re-runs it.)
CREATE TABLE IF NOT EXISTS outbox (
    seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    message_id  TEXT COLLATE "C" NOT NULL UNIQUE,
    event_type  TEXT COLLATE "C" NOT NULL,
    priority    TEXT COLLATE "C" NOT NULL,
    server_id   TEXT COLLATE "C" NOT NULL,
    body        TEXT COLLATE "C" NOT NULL,
    created_at  TEXT COLLATE "C" NOT NULL
);

-- One row: the replica draining the outbox, until expires_ns (Unix
-- nanoseconds by the holder's clock); holder '' when none.
CREATE TABLE IF NOT EXISTS outbox_drainer (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    holder      TEXT COLLATE "C" NOT NULL DEFAULT '',
    expires_ns  BIGINT NOT NULL DEFAULT 0
);
INSERT INTO outbox_drainer (id) VALUES (1) ON CONFLICT (id) DO NOTHING;

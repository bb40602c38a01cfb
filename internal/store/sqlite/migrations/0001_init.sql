-- ingot schema, version 1.
--
-- Portable by intent: the same tables, columns and indexes carry over to
-- PostgreSQL with BOOLEAN, BIGINT and TEXT as written (SQLite maps them to
-- its own affinities). Times are TEXT in a fixed-width UTC form
-- (2006-01-02T15:04:05.000000000Z) so that they sort as text and keep
-- nanoseconds; NULL means the zero time. JSON documents are TEXT.

CREATE TABLE servers (
    id                  TEXT    NOT NULL PRIMARY KEY,
    name                TEXT    NOT NULL,
    project_id          TEXT    NOT NULL,
    user_id             TEXT    NOT NULL,
    spec                TEXT    NOT NULL,              -- JSON lifecycle.Spec
    desired             TEXT    NOT NULL,
    phase               TEXT    NOT NULL,
    node_id             TEXT    NOT NULL DEFAULT '',
    reserved            BOOLEAN NOT NULL,
    deploy_requested    BOOLEAN NOT NULL,
    ports_allocated     BOOLEAN NOT NULL,
    excluded            TEXT    NOT NULL,              -- JSON []string
    attempts            TEXT    NOT NULL,              -- JSON []lifecycle.Attempt
    fault               TEXT,                          -- JSON lifecycle.Fault, NULL when none
    maintenance_since   TEXT,
    created_at          TEXT    NOT NULL,
    updated_at          TEXT,
    phase_since         TEXT,
    deadline            TEXT,
    delete_requested_at TEXT,
    launched_at         TEXT,
    create_request_id   TEXT    NOT NULL,
    delete_request_id   TEXT    NOT NULL,
    version             BIGINT  NOT NULL,
    needs_work          BOOLEAN NOT NULL               -- Server.NeedsWork(), kept on every write
);

-- I4: one server per node. Partial unique index, same syntax in PostgreSQL.
CREATE UNIQUE INDEX servers_node_id ON servers (node_id) WHERE node_id <> '';
-- ServersNeedingWork: only the rows that need work are in the index.
CREATE INDEX servers_needs_work ON servers (id) WHERE needs_work = TRUE;
-- ServersInPhase (phase = ? AND id > ? ORDER BY id).
CREATE INDEX servers_phase_id ON servers (phase, id);
-- ListServers keyset paging ((created_at, id) > (?, ?) ORDER BY created_at, id)
-- over live servers only: deleted rows, which accumulate, are not in it, and
-- desired and phase are in it so a status filter skips rows without reading them.
CREATE INDEX servers_live_created ON servers (created_at, id, desired, phase) WHERE phase <> 'deleted';

-- User requests, as os-instance-actions shows them.
CREATE TABLE actions (
    id          INTEGER PRIMARY KEY,                   -- PostgreSQL: BIGINT GENERATED ALWAYS AS IDENTITY
    server_id   TEXT NOT NULL REFERENCES servers (id),
    request_id  TEXT NOT NULL,
    action      TEXT NOT NULL,
    start_time  TEXT NOT NULL,
    message     TEXT NOT NULL,
    project_id  TEXT NOT NULL,
    user_id     TEXT NOT NULL
);
CREATE INDEX actions_server ON actions (server_id, request_id);

-- Steps of a server's story; id gives the recording order.
CREATE TABLE events (
    id          INTEGER PRIMARY KEY,                   -- PostgreSQL: BIGINT GENERATED ALWAYS AS IDENTITY
    server_id   TEXT NOT NULL REFERENCES servers (id),
    request_id  TEXT NOT NULL,
    action      TEXT NOT NULL,
    name        TEXT NOT NULL,
    node        TEXT NOT NULL,
    result      TEXT NOT NULL,
    details     TEXT NOT NULL,
    start       TEXT,
    finish      TEXT
);
CREATE INDEX events_server ON events (server_id, request_id, id);

-- One port (address + VIF) per server per network; ports_server_network also
-- serves the lookup by server.
CREATE TABLE ports (
    id          TEXT NOT NULL PRIMARY KEY,
    server_id   TEXT NOT NULL REFERENCES servers (id),
    network_id  TEXT NOT NULL,
    ip          TEXT NOT NULL,
    mac         TEXT NOT NULL,
    vif_node    TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    CONSTRAINT ports_network_ip UNIQUE (network_id, ip),
    CONSTRAINT ports_server_network UNIQUE (server_id, network_id)
);

-- ingot schema on PostgreSQL, version 6: the tables, columns and indexes of
-- SQLite's migrations 0001 to 0006 in one file, so that from here on a
-- migration NNNN means the same schema in both dialects (0007 and later sit
-- beside SQLite's file of the same number).
--
-- The choices that keep the two stores' behaviour identical:
--   - Times are TEXT in the fixed-width UTC form 2006-01-02T15:04:05.000000000Z
--     (as in SQLite): TIMESTAMPTZ keeps microseconds, the store keeps
--     nanoseconds; the form sorts as text in time order.
--   - Every TEXT column is COLLATE "C": byte order, as SQLite compares, so
--     sorting and keyset paging by name, id or node give the same pages
--     whatever the database's locale.
--   - JSON documents are TEXT (read back byte for byte; no query looks
--     inside them) except tags: the spec's tags copied into a JSONB array,
--     which the tag filters of a listing query (GIN index).

CREATE TABLE servers (
    id                  TEXT    COLLATE "C" NOT NULL PRIMARY KEY,
    name                TEXT    COLLATE "C" NOT NULL,
    project_id          TEXT    COLLATE "C" NOT NULL,
    user_id             TEXT    COLLATE "C" NOT NULL,
    spec                TEXT    COLLATE "C" NOT NULL,           -- JSON lifecycle.Spec
    tags                JSONB   NOT NULL DEFAULT '[]',          -- spec.tags, for the list filters
    desired             TEXT    COLLATE "C" NOT NULL,
    phase               TEXT    COLLATE "C" NOT NULL,
    node_id             TEXT    COLLATE "C" NOT NULL DEFAULT '',
    ext                 TEXT    COLLATE "C" NOT NULL DEFAULT '{}', -- JSON: lifecycle fields no query reads
    requests            TEXT    COLLATE "C" NOT NULL DEFAULT '{}', -- JSON: op, op_gen, lock (the API's)
    deploy_requested    BOOLEAN NOT NULL,
    ports_allocated     BOOLEAN NOT NULL,
    volumes_on_node     BOOLEAN NOT NULL DEFAULT FALSE,
    volumes_released    BOOLEAN NOT NULL DEFAULT FALSE,
    excluded            TEXT    COLLATE "C" NOT NULL,           -- JSON []string
    attempts            TEXT    COLLATE "C" NOT NULL,           -- JSON []lifecycle.Attempt
    fault               TEXT    COLLATE "C",                    -- JSON lifecycle.Fault, NULL when none
    maintenance_since   TEXT    COLLATE "C",
    created_at          TEXT    COLLATE "C" NOT NULL,
    updated_at          TEXT    COLLATE "C",
    phase_since         TEXT    COLLATE "C",
    deadline            TEXT    COLLATE "C",
    delete_requested_at TEXT    COLLATE "C",
    launched_at         TEXT    COLLATE "C",
    create_request_id   TEXT    COLLATE "C" NOT NULL,
    delete_request_id   TEXT    COLLATE "C" NOT NULL,
    version             BIGINT  NOT NULL,
    needs_work          BOOLEAN NOT NULL,                       -- Server.NeedsWork(), kept on every write
    -- What a server counts against its project's quotas (from the spec at create).
    vcpus               INTEGER NOT NULL DEFAULT 0,
    ram_mb              INTEGER NOT NULL DEFAULT 0,
    resource_class      TEXT    COLLATE "C" NOT NULL DEFAULT ''
);

-- I4: one server per node.
CREATE UNIQUE INDEX servers_node_id ON servers (node_id) WHERE node_id <> '';
-- ServersNeedingWork: only the rows that need work are in the index.
CREATE INDEX servers_needs_work ON servers (id) WHERE needs_work;
-- ServersInPhase (phase = $1 AND id > $2 ORDER BY id).
CREATE INDEX servers_phase_id ON servers (phase, id);
-- ListServers keyset paging over live servers, all and per project.
CREATE INDEX servers_live_created ON servers (created_at, id, desired, phase) WHERE phase <> 'deleted';
CREATE INDEX servers_project_live ON servers (project_id, created_at, id, desired, phase) WHERE phase <> 'deleted';
-- Usage: an index-only count and sum over a project's live servers.
CREATE INDEX servers_project_usage ON servers (project_id, desired, resource_class, vcpus, ram_mb) WHERE phase <> 'deleted';
-- Tag filters (tags ? $n).
CREATE INDEX servers_tags ON servers USING GIN (tags);

-- User requests, as os-instance-actions shows them.
CREATE TABLE actions (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    server_id   TEXT COLLATE "C" NOT NULL REFERENCES servers (id),
    request_id  TEXT COLLATE "C" NOT NULL,
    action      TEXT COLLATE "C" NOT NULL,
    start_time  TEXT COLLATE "C" NOT NULL,
    message     TEXT COLLATE "C" NOT NULL,
    project_id  TEXT COLLATE "C" NOT NULL,
    user_id     TEXT COLLATE "C" NOT NULL
);
CREATE INDEX actions_server ON actions (server_id, request_id);

-- Steps of a server's story; id gives the recording order.
CREATE TABLE events (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    server_id   TEXT COLLATE "C" NOT NULL REFERENCES servers (id),
    request_id  TEXT COLLATE "C" NOT NULL,
    action      TEXT COLLATE "C" NOT NULL,
    name        TEXT COLLATE "C" NOT NULL,
    node        TEXT COLLATE "C" NOT NULL,
    result      TEXT COLLATE "C" NOT NULL,
    details     TEXT COLLATE "C" NOT NULL,
    start       TEXT COLLATE "C",
    finish      TEXT COLLATE "C"
);
CREATE INDEX events_server ON events (server_id, request_id, id);

-- One port (address + VIF) per server per network.
CREATE TABLE ports (
    id          TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    server_id   TEXT COLLATE "C" NOT NULL REFERENCES servers (id),
    network_id  TEXT COLLATE "C" NOT NULL,
    ip          TEXT COLLATE "C" NOT NULL,
    mac         TEXT COLLATE "C" NOT NULL,
    vif_node    TEXT COLLATE "C" NOT NULL DEFAULT '',
    created_at  TEXT COLLATE "C" NOT NULL,
    binding     TEXT COLLATE "C" NOT NULL DEFAULT '',   -- JSON store.Binding, '' when unbound
    CONSTRAINT ports_network_ip UNIQUE (network_id, ip),
    CONSTRAINT ports_server_network UNIQUE (server_id, network_id)
);

-- The embedded volume registry. server_id is '' while available.
CREATE TABLE volumes (
    id                    TEXT    COLLATE "C" NOT NULL PRIMARY KEY,
    name                  TEXT    COLLATE "C" NOT NULL,
    project_id            TEXT    COLLATE "C" NOT NULL DEFAULT 'ingot',
    user_id               TEXT    COLLATE "C" NOT NULL DEFAULT 'ingot',
    size_gb               INTEGER NOT NULL,
    status                TEXT    COLLATE "C" NOT NULL,
    server_id             TEXT    COLLATE "C" NOT NULL DEFAULT '',
    node_id               TEXT    COLLATE "C" NOT NULL DEFAULT '',
    boot_index            INTEGER NOT NULL DEFAULT -1,
    delete_on_termination BOOLEAN NOT NULL DEFAULT FALSE,
    target_iqn            TEXT    COLLATE "C" NOT NULL,
    target_lun            INTEGER NOT NULL,
    target_portal         TEXT    COLLATE "C" NOT NULL,
    status_reason         TEXT    COLLATE "C" NOT NULL DEFAULT '',
    created_at            TEXT    COLLATE "C" NOT NULL,
    updated_at            TEXT    COLLATE "C"
);
CREATE INDEX volumes_server ON volumes (server_id, boot_index, id) WHERE server_id <> '';
CREATE INDEX volumes_project ON volumes (project_id, id);

-- One keypair per (user, name).
CREATE TABLE keypairs (
    user_id     TEXT COLLATE "C" NOT NULL,
    name        TEXT COLLATE "C" NOT NULL,
    type        TEXT COLLATE "C" NOT NULL,
    public_key  TEXT COLLATE "C" NOT NULL,
    fingerprint TEXT COLLATE "C" NOT NULL,
    created_at  TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (user_id, name)
);

-- Quota overrides an admin set; the defaults come from the configuration.
CREATE TABLE quotas (
    project_id TEXT   COLLATE "C" NOT NULL,
    resource   TEXT   COLLATE "C" NOT NULL,
    hard_limit BIGINT NOT NULL,
    PRIMARY KEY (project_id, resource)
);

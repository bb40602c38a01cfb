-- ingot schema, version 7: what an administrator manages through the
-- compute API — flavors and who may use the private ones, server groups
-- and their members, and the compute services (one row per ingot replica
-- and role, with its heartbeat). Plain types only, so the PostgreSQL
-- schema is the same text but for INTEGER PRIMARY KEY (an identity there).

-- A flavor. extra_specs is a JSON object of strings; resource_class is
-- the Ironic class of a configured flavor ("" for one made through the
-- API, whose class comes from its resources:CUSTOM_* extra spec); seeded
-- marks the flavors the configuration file owns.
CREATE TABLE flavors (
    id            TEXT    NOT NULL PRIMARY KEY,
    name          TEXT    NOT NULL UNIQUE,
    vcpus         INTEGER NOT NULL,
    ram_mb        INTEGER NOT NULL,
    disk_gb       INTEGER NOT NULL,
    swap_mb       INTEGER NOT NULL DEFAULT 0,
    ephemeral_gb  INTEGER NOT NULL DEFAULT 0,
    rxtx_factor   REAL    NOT NULL DEFAULT 1,
    is_public     BOOLEAN NOT NULL DEFAULT TRUE,
    disabled      BOOLEAN NOT NULL DEFAULT FALSE,
    description   TEXT,
    extra_specs   TEXT    NOT NULL DEFAULT '{}',
    resource_class TEXT   NOT NULL DEFAULT '',
    seeded        BOOLEAN NOT NULL DEFAULT FALSE,
    created_at    TEXT    NOT NULL
);

-- The projects that may use a private flavor.
CREATE TABLE flavor_access (
    flavor_id  TEXT NOT NULL REFERENCES flavors (id) ON DELETE CASCADE,
    project_id TEXT NOT NULL,
    PRIMARY KEY (flavor_id, project_id)
);

-- A server group: one policy (affinity, anti-affinity, soft-affinity,
-- soft-anti-affinity) and its rules (a JSON object, max_server_per_host).
CREATE TABLE server_groups (
    id         TEXT NOT NULL PRIMARY KEY,
    name       TEXT NOT NULL,
    project_id TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    policy     TEXT NOT NULL,
    rules      TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL
);
CREATE INDEX server_groups_project ON server_groups (project_id, created_at, id);

-- A server belongs to at most one group; the row is written in the
-- server's create transaction and outlives the server (listings join the
-- live servers).
CREATE TABLE server_group_members (
    server_id TEXT NOT NULL PRIMARY KEY,
    group_id  TEXT NOT NULL REFERENCES server_groups (id) ON DELETE CASCADE
);
CREATE INDEX server_group_members_group ON server_group_members (group_id, server_id);

-- A service: binary_name (nova-compute, nova-scheduler, nova-conductor) on a
-- host (the replica's configured host). id is the integer Nova shows
-- before 2.53, uuid the one after.
CREATE TABLE services (
    id              INTEGER NOT NULL PRIMARY KEY,
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

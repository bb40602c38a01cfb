-- ingot schema, version 9: os-aggregates host aggregates. An aggregate is a
-- named set of compute service hosts with metadata (a JSON object of
-- strings; its availability_zone key is the aggregate's zone, as in Nova).
-- Recorded for the API; the scheduler does not read them. Plain types
-- only, so the PostgreSQL schema is the same text but for INTEGER PRIMARY
-- KEY (an identity there) and byte-order collation.
CREATE TABLE aggregates (
    id         INTEGER NOT NULL PRIMARY KEY,
    uuid       TEXT    NOT NULL UNIQUE,
    name       TEXT    NOT NULL UNIQUE,
    metadata   TEXT    NOT NULL DEFAULT '{}',
    created_at TEXT    NOT NULL,
    updated_at TEXT
);

-- The hosts of an aggregate: names of compute service hosts (a host may
-- be in several aggregates). Not a foreign key to services: deleting a
-- service record leaves the host in its aggregates, as in Nova.
CREATE TABLE aggregate_hosts (
    aggregate_id INTEGER NOT NULL REFERENCES aggregates (id) ON DELETE CASCADE,
    host         TEXT    NOT NULL,
    PRIMARY KEY (aggregate_id, host)
);
CREATE INDEX aggregate_hosts_host ON aggregate_hosts (host);

-- os-quota-class-sets: the limits of a quota class ("default" is the one
-- that counts: the defaults every project gets, over the configured ones).
-- A table of its own rather than a reserved project_id in quotas: project
-- ids come from the caller (any string under noauth), so a reserved key
-- could be reached — and reset — through os-quota-sets/{project}.
CREATE TABLE quota_classes (
    class_name TEXT   NOT NULL,
    resource   TEXT   NOT NULL,
    hard_limit BIGINT NOT NULL,
    PRIMARY KEY (class_name, resource)
);

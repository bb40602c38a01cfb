-- ingot schema, version 5: projects and users own servers, volumes and
-- keypairs; quotas.
--
-- Rows written before projects existed belong to the noauth default
-- project and user, "ingot" (README, auth.noauth).

UPDATE servers SET project_id = 'ingot' WHERE project_id = '';
UPDATE servers SET user_id = 'ingot' WHERE user_id = '';
UPDATE actions SET project_id = 'ingot' WHERE project_id = '';
UPDATE actions SET user_id = 'ingot' WHERE user_id = '';

-- What a server counts against its project's quotas (copied from the spec
-- at create; json_extract is SQLite's, PostgreSQL's migration uses ->>).
ALTER TABLE servers ADD COLUMN vcpus          INTEGER NOT NULL DEFAULT 0;
ALTER TABLE servers ADD COLUMN ram_mb         INTEGER NOT NULL DEFAULT 0;
ALTER TABLE servers ADD COLUMN resource_class TEXT    NOT NULL DEFAULT '';
UPDATE servers SET
    vcpus          = COALESCE(json_extract(spec, '$.vcpus'), 0),
    ram_mb         = COALESCE(json_extract(spec, '$.ram_mb'), 0),
    resource_class = COALESCE(json_extract(spec, '$.resource_class'), '');

-- ListServers of one project, paged as servers_live_created pages them all.
CREATE INDEX servers_project_live ON servers (project_id, created_at, id, desired, phase) WHERE phase <> 'deleted';
-- Usage: an index-only count and sum over a project's live servers.
CREATE INDEX servers_project_usage ON servers (project_id, desired, resource_class, vcpus, ram_mb) WHERE phase <> 'deleted';

ALTER TABLE volumes ADD COLUMN project_id TEXT NOT NULL DEFAULT 'ingot';
ALTER TABLE volumes ADD COLUMN user_id    TEXT NOT NULL DEFAULT 'ingot';
CREATE INDEX volumes_project ON volumes (project_id, id);

-- One keypair per (user, name).
CREATE TABLE keypairs (
    user_id     TEXT NOT NULL,
    name        TEXT NOT NULL,
    type        TEXT NOT NULL,
    public_key  TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (user_id, name)
);

-- Quota overrides an admin set; the defaults come from the configuration.
CREATE TABLE quotas (
    project_id TEXT   NOT NULL,
    resource   TEXT   NOT NULL,
    hard_limit BIGINT NOT NULL,
    PRIMARY KEY (project_id, resource)
);

-- ingot schema, version 17: one counter that every write to the services,
-- the aggregates or the aggregate hosts bumps (statement triggers, so no
-- writer can forget it), so that a replica may keep the availability zones
-- it derived from them until the counter moves. BEFORE: a transaction
-- locks the counter's row before any row of those tables, so two admin
-- writes queue on it instead of deadlocking over an aggregate's row. (IF
-- NOT EXISTS, OR REPLACE, IF EXISTS: a database rewound to an older
-- version by hand re-runs it.)
CREATE TABLE IF NOT EXISTS admin_revision (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    rev  BIGINT NOT NULL DEFAULT 0
);
INSERT INTO admin_revision (id) VALUES (1) ON CONFLICT (id) DO NOTHING;
CREATE OR REPLACE FUNCTION bump_admin_revision() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE admin_revision SET rev = rev + 1;
    RETURN NULL;
END;
$$;
DROP TRIGGER IF EXISTS services_rev ON services;
CREATE TRIGGER services_rev BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON services
    FOR EACH STATEMENT EXECUTE FUNCTION bump_admin_revision();
DROP TRIGGER IF EXISTS aggregates_rev ON aggregates;
CREATE TRIGGER aggregates_rev BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON aggregates
    FOR EACH STATEMENT EXECUTE FUNCTION bump_admin_revision();
DROP TRIGGER IF EXISTS aggregate_hosts_rev ON aggregate_hosts;
CREATE TRIGGER aggregate_hosts_rev BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON aggregate_hosts
    FOR EACH STATEMENT EXECUTE FUNCTION bump_admin_revision();

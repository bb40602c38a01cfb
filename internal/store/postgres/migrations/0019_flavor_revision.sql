-- ingot schema, version 19: the flavors' writes move the admin revision too,
-- so that a replica may keep the flavors it renders servers with until it
-- moves, as it keeps the zones (a statement trigger before the write, as
-- version 17's: the counter's row is locked first).
DROP TRIGGER IF EXISTS flavors_rev ON flavors;
CREATE TRIGGER flavors_rev BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON flavors
    FOR EACH STATEMENT EXECUTE FUNCTION bump_admin_revision();

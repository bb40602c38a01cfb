-- ingot schema, version 3: the lifecycle fields that no query filters on
-- move into one JSON document (ext), so a new field needs no migration; the
-- unread "reserved" flag goes.

ALTER TABLE servers ADD COLUMN ext TEXT NOT NULL DEFAULT '{}';
ALTER TABLE servers DROP COLUMN reserved;

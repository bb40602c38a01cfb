-- ingot schema, version 4: what the API records for a server besides the
-- create and the delete — the day-2 operation asked for (with its
-- generation) and the lock — as one JSON document that SaveServer never
-- writes.

ALTER TABLE servers ADD COLUMN requests TEXT NOT NULL DEFAULT '{}';

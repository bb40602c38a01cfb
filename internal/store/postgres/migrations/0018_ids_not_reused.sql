-- ingot schema, version 18: SQLite's aggregates and services became
-- AUTOINCREMENT so that a deleted one's id is never handed out again.
-- PostgreSQL's identities already keep a high-water mark; nothing changes
-- here but the version, which the two stores share.
SELECT 1;

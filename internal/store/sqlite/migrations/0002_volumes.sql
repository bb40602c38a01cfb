-- ingot schema, version 2: the embedded volume registry and the servers'
-- volume hold flags.
--
-- Existing servers have no volumes, so their stored needs_work (a copy of
-- NeedsWork(), which now also counts held volumes) stays right as it is.

ALTER TABLE servers ADD COLUMN volumes_on_node  BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE servers ADD COLUMN volumes_released BOOLEAN NOT NULL DEFAULT FALSE;

-- One volume of the registry. server_id is '' while available; otherwise
-- the server holding it (no foreign key, so '' can mean none; the holder is
-- always a server row in practice, CreateServer writes both at once).
CREATE TABLE volumes (
    id                    TEXT    NOT NULL PRIMARY KEY,
    name                  TEXT    NOT NULL,
    size_gb               INTEGER NOT NULL,
    status                TEXT    NOT NULL,
    server_id             TEXT    NOT NULL DEFAULT '',
    node_id               TEXT    NOT NULL DEFAULT '',
    boot_index            INTEGER NOT NULL DEFAULT -1,
    delete_on_termination BOOLEAN NOT NULL DEFAULT FALSE,
    target_iqn            TEXT    NOT NULL,
    target_lun            INTEGER NOT NULL,
    target_portal         TEXT    NOT NULL,
    status_reason         TEXT    NOT NULL DEFAULT '',
    created_at            TEXT    NOT NULL,
    updated_at            TEXT
);

-- ServerVolumes: only held volumes are in the index.
CREATE INDEX volumes_server ON volumes (server_id, boot_index, id) WHERE server_id <> '';

-- ingot schema, version 12: the Cinder attachment of a held volume
-- (volume.backend: cinder). attachment_id is the attachment ingot made
-- for the holder on attachment_node, written right after Cinder answers;
-- an attachment made before a crash kept it from being written is found
-- again by server and volume (Cinder lists attachments by instance), so
-- the columns say which attachment is known good, not which exist.
ALTER TABLE volumes ADD COLUMN attachment_id   TEXT NOT NULL DEFAULT '';
ALTER TABLE volumes ADD COLUMN attachment_node TEXT NOT NULL DEFAULT '';

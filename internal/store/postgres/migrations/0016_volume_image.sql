-- ingot schema, version 16: the image a volume was made from (Cinder's
-- imageRef at create; "" for a blank volume).
ALTER TABLE volumes ADD COLUMN image_id TEXT NOT NULL DEFAULT '';

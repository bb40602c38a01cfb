-- ingot schema, version 14: a volume's description (Cinder's, given at
-- create; "" for none).
ALTER TABLE volumes ADD COLUMN description TEXT NOT NULL DEFAULT '';

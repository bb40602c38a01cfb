-- shard_hash is store.ShardHash(id) (FNV-1a, 32 bits), written at create.
-- A replica loads the servers needing work of the shards it holds with
-- shard_hash % shards IN (held), so a change of the shard count rewrites
-- nothing. The migration's Go step (sqlstore.FillShardHash) fills it for
-- the servers that exist already.
ALTER TABLE servers ADD COLUMN shard_hash BIGINT NOT NULL DEFAULT 0;

-- Index-only: the work list in id order with its versions and hashes.
CREATE INDEX servers_work_shard ON servers (id, version, shard_hash) WHERE needs_work;

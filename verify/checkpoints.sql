-- Verify agent-state:checkpoints on pg
select thread_id, checkpoint_ns, checkpoint_id, owner, parent_checkpoint_id, type, checkpoint, metadata,
       channel_versions, created_at
from ai.checkpoints where false;
select thread_id, checkpoint_ns, channel, version, owner, type, blob from ai.checkpoint_blobs where false;
select thread_id, checkpoint_ns, checkpoint_id, task_id, idx, owner, channel, type, blob, task_path
from ai.checkpoint_writes where false;
select thread_id, owner, deleted_at from ai.deleted_threads where false;
-- RLS forced on every table of this change
select 1 / (select (count(*) = 4)::int from pg_catalog.pg_class
            where oid in ('ai.checkpoints'::regclass, 'ai.checkpoint_blobs'::regclass,
                          'ai.checkpoint_writes'::regclass, 'ai.deleted_threads'::regclass)
              and relrowsecurity and relforcerowsecurity);
select 1 / (select count(*)::int from ai.error_codes where sqlstate = 'AS020');
select 'ai._check_checkpoint_row(jsonb, jsonb)'::regprocedure;
select 1 / count(*) from pg_catalog.pg_constraint where conname = 'checkpoints_row_check' and conrelid = 'ai.checkpoints'::regclass;
-- The three columns compress with pglz.
select 1 / (select (count(*) = 3)::integer from pg_catalog.pg_attribute
            where (attrelid, attname) in (('ai.checkpoints'::regclass, 'checkpoint'),
                                          ('ai.checkpoint_blobs'::regclass, 'blob'),
                                          ('ai.checkpoint_writes'::regclass, 'blob'))
              and attcompression = 'p');

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
select 'ai.put_checkpoint(text, text, text, text, text, bytea, jsonb, jsonb, text[], text[], text[], bytea[], bigint, bigint, text)'::regprocedure,
       'ai.put_writes(text, text, text, text, integer[], text[], text[], bytea[], text, bigint, bigint)'::regprocedure,
       'ai.get_checkpoint(text, text, text)'::regprocedure,
       'ai.list_checkpoints(text, text, text, integer, jsonb)'::regprocedure,
       'ai.checkpoint_lineage(text, text, text, text)'::regprocedure,
       'ai.checkpoints_between(text, timestamptz, timestamptz)'::regprocedure,
       'ai.delta_channel_history(text, text, text, text[])'::regprocedure,
       'ai.fork_thread(text, text, text, text)'::regprocedure,
       'ai.copy_thread(text, text)'::regprocedure,
       'ai.delete_thread(text)'::regprocedure,
       'ai.delete_for_runs(text[])'::regprocedure,
       'ai.prune_checkpoints(text[], text)'::regprocedure,
       'ai.prune_idle_threads(interval, text)'::regprocedure;

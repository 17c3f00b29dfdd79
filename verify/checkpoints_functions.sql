-- Verify agent-state:checkpoints_functions on pg

begin;

select 'ai._delete_tombstoned_session()'::regprocedure;
select 'ai._check_key(text, text, integer)'::regprocedure;
select 'ai._check_deletes_at_read_committed(text)'::regprocedure;
select (row(array['m'], array['1'], array['json'], array['\x01'::bytea], array[null]::text[])::ai.checkpoint_values).channels,
       (row('task', '', array[0], array['m'], array['json'], array['\x01'::bytea])::ai.task_writes).idx,
       (row(1, 2, 'sync')::ai.step_commit).durability;
select 'ai._check_checkpoint_ns(text)'::regprocedure;
select 'ai._check_blob_sizes(bytea, text[], text[], bytea[])'::regprocedure;
select 'ai._checkpoint_thread_owner(text)'::regprocedure;
select 'ai._collect_checkpoint_blobs(text[])'::regprocedure;
select 'ai._rebuilt_value(text, text, text, text)'::regprocedure;
select 'ai._max_delta_depth()'::regprocedure;
select 'ai._msgpack_is_array(bytea)'::regprocedure;
select 'ai._insert_channel_values(text, text, text, text[], text[], text[], bytea[], text[], text)'::regprocedure;
select 'ai._unname_writes(text[], text[])'::regprocedure;
select 'ai._append_step_messages(text, text, text, jsonb)'::regprocedure;
select (ai._msgpack_is_array('\x920102'::bytea) and not ai._msgpack_is_array('\x9301'::bytea)) or 1/0 = 1;
select 'ai._insert_writes(text, text, text, text, text, text, integer[], text[], text[], bytea[])'::regprocedure;
select 'ai._check_writes(text, text, integer[], text[], text[], bytea[])'::regprocedure;
select 'ai._check_checkpoint_values(bytea, ai.checkpoint_values)'::regprocedure;
select 'ai._check_step(text, text, text, text, text, bytea, jsonb, jsonb, ai.checkpoint_values, ai.task_writes, text)'::regprocedure;
select 'ai.put_checkpoint(text, text, text, text, text, bytea, jsonb, jsonb, ai.checkpoint_values, ai.task_writes, jsonb, ai.step_commit)'::regprocedure;
select 'ai.put_writes(text, text, text, text, integer[], text[], text[], bytea[], text, bigint, bigint)'::regprocedure;
select 'ai._whole_values(text, text, text[], jsonb, bytea[])'::regprocedure;
select 'ai._checkpoint_reads(text, text, text, text, jsonb, integer)'::regprocedure;
select 'ai._prune_thread(text, text)'::regprocedure;
select 1/(case when to_regprocedure('ai._checkpoint_tuple(ai.checkpoints)') is null then 1 else 0 end);
select 'ai.get_checkpoint(text, text, text)'::regprocedure;
select 'ai._list_checkpoints_any(text, text, text, integer, jsonb, text, text)'::regprocedure;
select 'ai.list_checkpoints(text, text, text, integer, jsonb, text, text)'::regprocedure;
select 'ai.checkpoint_lineage(text, text, text, text, integer)'::regprocedure;
select 'ai.checkpoints_between(text, timestamptz, timestamptz, integer, text, text)'::regprocedure;
select 'ai._delta_walk(text, text, text, text[])'::regprocedure;
select 'ai.delta_channel_history(text, text, text, text[])'::regprocedure;
select 'ai._create_copy_session(text, text)'::regprocedure;
select 'ai._copy_checkpoint_rows(text, text, text, text, text[])'::regprocedure;
select 'ai.fork_thread(text, text, text, text)'::regprocedure;
select 'ai.copy_thread(text, text)'::regprocedure;
select 'ai.delete_thread(text)'::regprocedure;
select 'ai.delete_for_runs(text[])'::regprocedure;
select 'ai.prune_checkpoints(text[], text)'::regprocedure;
select 'ai.prune_idle_threads(interval, text, integer, text)'::regprocedure;
select 1 / count(*) from pg_catalog.pg_proc where oid = 'ai.prune_all_idle_threads'::regproc and prokind = 'p';
select 1 / count(*) from pg_catalog.pg_trigger where tgname = 'deleted_threads_delete_session' and tgrelid = 'ai.deleted_threads'::regclass;

-- get_checkpoint, list_checkpoints and _list_checkpoints_any keep their key probes (enable_seqscan = off).
select 1 / (select (count(*) = 3)::integer from pg_catalog.pg_proc
            where oid in ('ai.get_checkpoint(text, text, text)'::regprocedure,
                          'ai.list_checkpoints(text, text, text, integer, jsonb, text, text)'::regprocedure,
                          'ai._list_checkpoints_any(text, text, text, integer, jsonb, text, text)'::regprocedure)
              and 'enable_seqscan=off' = any (proconfig));

rollback;

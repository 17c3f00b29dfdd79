-- Revert agent-state:checkpoints_functions from pg

begin;

drop trigger deleted_threads_delete_session on ai.deleted_threads;
drop function ai.prune_idle_threads(interval, text);
drop function ai.prune_checkpoints(text[], text);
drop function ai.delete_for_runs(text[]);
drop function ai.delete_thread(text);
drop function ai.copy_thread(text, text);
drop function ai.fork_thread(text, text, text, text);
drop function ai._copy_checkpoint_rows(text, text, text, text, text[]);
drop function ai._create_copy_session(text, text);
drop function ai.delta_channel_history(text, text, text, text[]);
drop function ai._delta_walk(text, text, text, text[]);
drop function ai.checkpoints_between(text, timestamptz, timestamptz);
drop function ai.checkpoint_lineage(text, text, text, text);
drop function ai.list_checkpoints(text, text, text, integer, jsonb);
drop function ai._list_checkpoints_any(text, text, text, integer, jsonb);
drop function ai.get_checkpoint(text, text, text);
drop function ai._checkpoint_tuple(ai.checkpoints);
drop function ai.put_writes(text, text, text, text, integer[], text[], text[], bytea[], text, bigint, bigint);
drop function ai.put_checkpoint(text, text, text, text, text, bytea, jsonb, jsonb, text[], text[], text[], bytea[], bigint, bigint, text);
drop function ai._reset_current_checkpoint(text[]);
drop function ai._collect_checkpoint_blobs(text[]);
drop function ai._checkpoint_thread_owner(text);
drop function ai._fence(bigint, bigint);
drop function ai._check_blob_sizes(bytea, text[], text[], bytea[]);
drop function ai._check_checkpoint_ns(text);
drop function ai._delete_tombstoned_session();

commit;

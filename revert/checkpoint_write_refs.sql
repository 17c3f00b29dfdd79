-- Revert agent-state:checkpoint_write_refs from pg
--
-- A value stored as a reference gets the bytes of the write it names first, so dropping the
-- columns loses nothing.
begin;

update ai.checkpoint_blobs b
set blob = w.blob
from ai.checkpoint_writes w
where b.write_task_id is not null and w.thread_id = b.thread_id and w.checkpoint_ns = b.checkpoint_ns
  and w.checkpoint_id = b.write_checkpoint_id and w.task_id = b.write_task_id and w.idx = b.write_idx;
update ai_archive.checkpoint_blobs b
set blob = w.blob
from ai_archive.checkpoint_writes w
where b.write_task_id is not null and w.thread_id = b.thread_id and w.checkpoint_ns = b.checkpoint_ns
  and w.checkpoint_id = b.write_checkpoint_id and w.task_id = b.write_task_id and w.idx = b.write_idx;
alter table ai.checkpoint_blobs drop column write_checkpoint_id, drop column write_task_id, drop column write_idx;
alter table ai_archive.checkpoint_blobs drop column write_checkpoint_id, drop column write_task_id, drop column write_idx;

commit;

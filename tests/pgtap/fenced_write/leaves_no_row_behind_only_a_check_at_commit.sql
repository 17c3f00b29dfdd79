\ir ../fixtures/helpers.sql
begin;
select plan(1);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

-- fenced_write queues its check at commit (the deferred trigger of ai.job_fences) and deletes
-- the row that queued it at once: the table never holds a committed row.
select ai.fenced_write(:id, :token) is not null as fenced \gset
reset role;
select is((select count(*) from ai.job_fences), 0::bigint, 'the fence''s row is gone at once');

select * from finish();
rollback;

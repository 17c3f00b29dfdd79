\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

select throws_ok($$select ai.fenced_write(-1, 1)$$, 'AS001', 'job -1 not found', 'unknown job');
select ai.cancel_job(:id) is not null as cancelled \gset
select throws_ok(format('select ai.fenced_write(%s, %s)', :id, :token), 'AS006', format('job %s: lease lost', :id), 'a cancelled job fences out its worker');

select * from finish();
rollback;

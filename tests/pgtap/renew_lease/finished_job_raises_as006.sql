\ir ../fixtures/helpers.sql
begin;
select plan(1);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

select ai.complete_job(:id, :token) is not null as done \gset
select throws_ok(format('select ai.renew_lease(%s, %s)', :id, :token), 'AS006', format('job %s: lease lost', :id), 'a completed job has no lease to renew');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

select ai.complete_job(:id, :token) is not null as done \gset
select throws_ok(format('select ai.cancel_job(%s)', :id), 'AS004', format('job %s is COMPLETED: it cannot be cancelled', :id), 'a completed job stays completed');
set local role tenant_a;
select (ai.enqueue_job('qa2')).job_id as other \gset
select ai.cancel_job(:other) is not null as c \gset
select throws_ok(format('select ai.cancel_job(%s)', :other), 'AS004', format('job %s is CANCELLED: it cannot be cancelled', :other), 'cancelling twice');

select * from finish();
rollback;

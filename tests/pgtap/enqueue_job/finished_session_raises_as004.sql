\ir ../fixtures/helpers.sql
begin;
select plan(1);
\ir ../fixtures/queue.sql

set local role tenant_a;
select ai.set_session_status('qa2', 'completed') is not null as done \gset
select throws_ok($$select ai.enqueue_job('qa2')$$, 'AS004', 'session qa2 is completed: no more jobs', 'no jobs for a finished session');

select * from finish();
rollback;

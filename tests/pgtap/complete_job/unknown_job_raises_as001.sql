\ir ../fixtures/helpers.sql
begin;
select plan(1);
\ir ../fixtures/queue.sql

set local role app_service;
select throws_ok($$select ai.complete_job(-1, 1)$$, 'AS001', 'job -1 not found', 'unknown job');

select * from finish();
rollback;

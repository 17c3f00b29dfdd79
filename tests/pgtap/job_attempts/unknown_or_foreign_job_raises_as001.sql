\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql
\ir ../fixtures/queue_held.sql

set local role tenant_b;
select throws_ok(format($$select * from ai.job_attempts(%s)$$, :id), 'AS001', null, 'another tenant''s job');
select throws_ok($$select * from ai.job_attempts(-1)$$, 'AS001', null, 'an unknown job');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(1);
\ir ../fixtures/retention.sql
set local role app_service;
select ai.act_as('tenant_b');

select results_eq($$select thread_id from ai.archive_sessions('90 days')$$, array['done-b'], 'only tenant_b''s session moves');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(4);
set local role tenant_a;
select set_config('ai.frozen_now', '2026-01-01 00:00:00+00', true);
select pg_temp.chain('t-old', 3);
select set_config('ai.frozen_now', '2026-01-09 00:00:00+00', true);
select pg_temp.chain('t-fresh', 3);
select set_config('ai.frozen_now', '2026-01-10 00:00:00+00', true);

select is((select pruned from ai.prune_idle_threads('7 days')), 1, 'one thread idle for more than 7 days');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.checkpoints where thread_id = 't-old'), 1, 'keep_latest: its newest stays');
select is((select count(*)::int from ai.checkpoints where thread_id = 't-fresh'), 3, 'the fresh thread is untouched');
set local role tenant_a;
select throws_ok($$select ai.prune_idle_threads('-1 day')$$, 'AS002', null, 'a negative interval');

select * from finish();
rollback;

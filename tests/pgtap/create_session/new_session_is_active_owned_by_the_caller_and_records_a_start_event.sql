\ir ../fixtures/helpers.sql
begin;
select plan(8);

set local ai.frozen_now = '2030-01-01 00:00:00+00';
set local role tenant_a;
select ai.create_session('t-new', '{"model": "m"}') as s \gset

select is((ai.get_session('t-new')).status, 'active', 'status is active');
select is((ai.get_session('t-new')).owner, 'tenant_a', 'owned by the caller');
select is((ai.get_session('t-new')).config, '{"model": "m"}'::jsonb, 'config stored');
select is((ai.get_session('t-new')).last_seq, 0::bigint, 'no message yet');
select is((ai.get_session('t-new')).completed_at, null::timestamptz, 'not completed');
select is((ai.get_session('t-new')).created_at, '2030-01-01 00:00:00+00'::timestamptz, 'created now');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.session_events where thread_id = 't-new' and kind = 'start'), 1, 'one start event');
select is((select payload from ai.session_events where thread_id = 't-new' and kind = 'start'),
          '{"config": {"model": "m"}}'::jsonb, 'the start event carries the config');
set local role tenant_a;

select * from finish();
rollback;

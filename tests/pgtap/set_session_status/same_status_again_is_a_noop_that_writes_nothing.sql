\ir ../fixtures/helpers.sql
begin;
select plan(16);

set local ai.frozen_now = '2030-01-01 00:00:00+00';
set local role tenant_a;
create temp table statuses as select unnest(array['active', 'waiting', 'completed', 'failed', 'cancelled']) s;
select count(ai.create_session('t-' || s)) from statuses;
select count(ai.set_session_status('t-' || s, s)) from statuses where s <> 'active';
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select count(*) as events_before from ai.session_events \gset
set local role tenant_a;

set local ai.frozen_now = '2030-01-02 00:00:00+00';
select is((ai.set_session_status('t-' || s, s)).status, s, format('%s -> %s succeeds', s, s)) from statuses order by s;
select is((ai.get_session('t-' || s)).updated_at, '2030-01-01 00:00:00+00'::timestamptz,
          format('%s -> %s leaves updated_at', s, s)) from statuses order by s;
select is((ai.get_session('t-' || s)).completed_at,
          case when s in ('completed', 'failed', 'cancelled') then '2030-01-01 00:00:00+00'::timestamptz end,
          format('%s -> %s leaves completed_at', s, s)) from statuses order by s;
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*) from ai.session_events), :'events_before'::bigint, 'no event was written');
set local role tenant_a;

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(16);

set local ai.frozen_now = '2030-01-01 00:00:00+00';
set local role tenant_a;
create temp table statuses as select unnest(array['active', 'waiting', 'completed', 'failed', 'cancelled']) s;
select count(ai.create_session('t-' || s)) from statuses;
select count(ai.set_session_status('t-' || s, s)) from statuses where s <> 'active';
select count(*) as events_before from ai.session_events \gset

set local ai.frozen_now = '2030-01-02 00:00:00+00';
select is((ai.set_session_status('t-' || s, s)).status, s, format('%s -> %s succeeds', s, s)) from statuses order by s;
select is((ai.get_session('t-' || s)).updated_at, '2030-01-01 00:00:00+00'::timestamptz,
          format('%s -> %s leaves updated_at', s, s)) from statuses order by s;
select is((ai.get_session('t-' || s)).completed_at,
          case when s in ('completed', 'failed', 'cancelled') then '2030-01-01 00:00:00+00'::timestamptz end,
          format('%s -> %s leaves completed_at', s, s)) from statuses order by s;
select is((select count(*) from ai.session_events), :'events_before'::bigint, 'no event was written');

select * from finish();
rollback;

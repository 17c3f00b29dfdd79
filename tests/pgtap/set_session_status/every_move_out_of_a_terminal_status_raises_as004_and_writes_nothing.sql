\ir ../fixtures/helpers.sql
begin;
select plan(14);

-- completed, failed and cancelled are final.
set local role tenant_a;
create temp table pairs as
  select f, t from unnest(array['completed', 'failed', 'cancelled']) f
  cross join unnest(array['active', 'waiting', 'completed', 'failed', 'cancelled']) t
  where f <> t;
select count(ai.create_session(format('t-%s-%s', f, t))) from pairs;
select count(ai.set_session_status(format('t-%s-%s', f, t), f)) from pairs;
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select count(*) as events_before from ai.session_events \gset
set local role tenant_a;

select throws_ok(format('select ai.set_session_status(%L, %L)', format('t-%s-%s', f, t), t), 'AS004',
                 format('session t-%s-%s cannot go from %s to %s', f, t, f, t),
                 format('%s -> %s is refused', f, t))
from pairs order by f, t;
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*) from ai.agent_sessions s join pairs p on s.thread_id = format('t-%s-%s', p.f, p.t)
           where s.status <> p.f)::int, 0, 'every session kept its terminal status');
select is((select count(*) from ai.session_events), :'events_before'::bigint, 'no status event was written');

select * from finish();
rollback;

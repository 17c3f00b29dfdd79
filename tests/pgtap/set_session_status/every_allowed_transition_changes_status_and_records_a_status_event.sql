\ir ../fixtures/helpers.sql
begin;
select plan(16);

-- active and waiting may go to any other status.
set local role tenant_a;
create temp table pairs as
  select f, t from unnest(array['active', 'waiting']) f
  cross join unnest(array['active', 'waiting', 'completed', 'failed', 'cancelled']) t
  where f <> t;
select count(ai.create_session(format('t-%s-%s', f, t))) from pairs;
select count(ai.set_session_status(format('t-%s-%s', f, t), f)) from pairs where f <> 'active';

select is((ai.set_session_status(format('t-%s-%s', f, t), t)).status, t, format('%s -> %s is allowed', f, t))
from pairs order by f, t;
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
-- the events read first (on a Citus formation a query may not correlate the temporary table
-- pairs with a distributed table)
create temp table status_events as select e.thread_id, e.kind, e.payload from ai.session_events e where e.kind = 'status';
select ok(exists(select from status_events e
                 where e.thread_id = format('t-%s-%s', f, t) and e.kind = 'status'
                   and e.payload = jsonb_build_object('from', f, 'to', t)),
          format('%s -> %s records a status event {from, to}', f, t))
from pairs order by f, t;

select * from finish();
rollback;

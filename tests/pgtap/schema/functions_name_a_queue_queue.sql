\ir ../fixtures/helpers.sql
begin;
select plan(1);

-- A queue is named queue wherever a row carries it (ai.agent_jobs, list_jobs, queue_stats).
select is_empty($$
  select p.oid::regprocedure::text || ': ' || c.name
  from pg_proc p
  cross join lateral (
    select u.n as name from unnest(p.proargnames, p.proargmodes) as u(n, m) where u.m in ('o', 't', 'b')
    union all
    select a.attname::text from pg_attribute a join pg_type t on t.typrelid = a.attrelid
    where t.oid = p.prorettype and a.attnum > 0 and not a.attisdropped
  ) c
  where p.pronamespace = 'ai'::regnamespace and p.proname not like '\_%' and c.name in ('queue_name', 'queue_id')$$,
  'no function of ai returns a queue under another name');

select * from finish();
rollback;

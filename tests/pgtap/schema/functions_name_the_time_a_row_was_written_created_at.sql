\ir ../fixtures/helpers.sql
begin;
select plan(1);

-- The time a row was written (ai.now() when it was inserted) is created_at in every row a
-- function returns (messages, events, retrievals, usage records, checkpoints, ...), not a synonym.
select is_empty($$
  select p.oid::regprocedure::text || ': ' || c.name
  from pg_proc p
  cross join lateral (
    select u.n as name from unnest(p.proargnames, p.proargmodes) as u(n, m) where u.m in ('o', 't', 'b')
    union all
    select a.attname::text from pg_attribute a join pg_type t on t.typrelid = a.attrelid
    where t.oid = p.prorettype and a.attnum > 0 and not a.attisdropped
  ) c
  where p.pronamespace = 'ai'::regnamespace and p.proname not like '\_%'
    and c.name in ('at', 'recorded_at', 'inserted_at', 'written_at', 'stored_at')$$,
  'no function of ai returns the time a row was written under another name');

select * from finish();
rollback;

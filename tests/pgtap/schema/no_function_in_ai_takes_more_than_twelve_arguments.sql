\ir ../fixtures/helpers.sql
begin;
select plan(1);

-- A call is read by what it holds, not counted by position (issue 34 item 7: ai.put_checkpoint took
-- 23 positional arguments). What belongs together is one record (deploy/checkpoints_functions.sql,
-- "The step's records": a step's values, its held writes, how it commits), so no function or
-- procedure of a schema ai% takes more than twelve.
select is_empty($$
  select p.oid::regprocedure::text || ' takes ' || p.pronargs || ' arguments'
  from pg_proc p join pg_namespace n on n.oid = p.pronamespace
  where n.nspname like 'ai%' and p.pronargs > 12
  order by 1$$,
  'no function in a schema ai% takes more than 12 arguments');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(2);

create temp view raised as
  select distinct m[1] as sqlstate
  from pg_proc p join pg_namespace n on n.oid = p.pronamespace,
       regexp_matches(p.prosrc, 'errcode\s*=\s*''(AS[0-9A-Z]{3})''', 'g') m
  where n.nspname = 'ai';

select cmp_ok((select count(*)::int from raised), '>=', 6, 'the scan finds the codes the functions raise');
select is_empty($$select sqlstate from raised except select sqlstate from ai.error_codes$$,
  'every ASnnn raised by a function in schema ai is listed in ai.error_codes');

select * from finish();
rollback;

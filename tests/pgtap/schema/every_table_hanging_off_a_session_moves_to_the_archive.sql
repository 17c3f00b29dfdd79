\ir ../fixtures/helpers.sql
begin;
select plan(2);

-- Archiving deletes a session, and the delete cascades to every table that references it: a
-- table missing from ai._archived_tables (or without a twin in ai_archive) would lose its rows.
select is(
  (select array_agg(c.conrelid::regclass::text order by 1)
   from pg_constraint c
   where c.contype = 'f' and c.confrelid = 'ai.agent_sessions'::regclass
     and c.conrelid::regclass::text not in (select 'ai.' || table_name from ai._archived_tables)),
  null, 'every table with a foreign key to ai.agent_sessions is listed in ai._archived_tables');
select is(
  (select array_agg(table_name order by 1) from ai._archived_tables a
   where to_regclass('ai_archive.' || quote_ident(a.table_name)) is null),
  null, 'and each has its twin in ai_archive');

select * from finish();
rollback;

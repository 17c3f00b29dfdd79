\ir ../fixtures/helpers.sql
begin;
select plan(3);

-- ai.archive_sessions copies a thread's rows into ai_archive while the hot tables go on, and the
-- thread id stays reserved while archived: a key of the archive that holds thread_id cannot be
-- taken twice. Any other unique key could be (a tenant writes a value, the session is archived,
-- the tenant writes the same value again in another thread): it stopped every sweep before the
-- archive learned to skip (issue 37). So every unique key of a session grain's twin holds
-- thread_id, or is one id the server makes (an identity, never reused, or a value only our
-- functions choose), listed here with the reason; a new key of a new grain is checked the day
-- it is added.
create temporary table server_made_ids (table_name text, column_name text, why text);
insert into server_made_ids values
  ('agent_jobs', 'job_id', 'an identity of ai.agent_jobs'),
  ('agent_jobs_archive', 'job_id', 'ai.agent_jobs'' identity, the job moved by ai.archive_jobs'),
  ('human_approvals', 'approval_id', 'ai.ulid(), written by ai.request_human only');

create temporary view archive_unique_keys as
  select c.relname::text as table_name, i.indexrelid::regclass::text as index_name,
         (select array_agg(a.attname::text order by a.attname) from pg_attribute a
          where a.attrelid = i.indrelid and a.attnum = any (i.indkey)) as columns
  from pg_index i join pg_class c on c.oid = i.indrelid
  where c.relnamespace = 'ai_archive'::regnamespace and i.indisunique
    and (c.relname = 'agent_sessions' or c.relname in (select table_name from ai._archived_tables));

select is_empty(
  $$select index_name, columns from archive_unique_keys k
    where not 'thread_id' = any (k.columns)
      and not exists (select from server_made_ids s where s.table_name = k.table_name and array[s.column_name] = k.columns)$$,
  'every unique key of the session archive holds thread_id or is an id the server makes');
select is_empty(
  $$select s.table_name, s.column_name from server_made_ids s
    where s.table_name = 'agent_jobs' and not exists (
      select from pg_attribute a where a.attrelid = 'ai.agent_jobs'::regclass and a.attname = s.column_name and a.attidentity = 'a')$$,
  'and the identity named is one (generated always)');

-- The way back: ai.restore_session puts the rows into the hot tables again, where a key without
-- thread_id may have been taken since by the owner. The one such key is the queue's idempotency
-- key (owner, queue, idempotency_key), which an archived job frees; the restore names it (AS041,
-- tests/pgtap/restore_session/a_job_key_reused_since_the_archive_refuses_the_restore_with_as041.sql).
create temporary view hot_unique_keys as
  select c.relname::text as table_name, i.indexrelid::regclass::text as index_name,
         (select array_agg(a.attname::text order by a.attname) from pg_attribute a
          where a.attrelid = i.indrelid and a.attnum = any (i.indkey)) as columns
  from pg_index i join pg_class c on c.oid = i.indrelid
  where c.relnamespace = 'ai'::regnamespace and i.indisunique
    and (c.relname = 'agent_sessions' or c.relname in (select table_name from ai._archived_tables));
select is_empty(
  $$select index_name, columns from hot_unique_keys k
    where not 'thread_id' = any (k.columns)
      and not exists (select from server_made_ids s where s.table_name = k.table_name and array[s.column_name] = k.columns)
      and k.index_name <> 'ai.agent_jobs_idempotency_key'$$,
  'and of the hot tables a restore writes, only the queue''s idempotency key can have been taken since');

select * from finish();
rollback;

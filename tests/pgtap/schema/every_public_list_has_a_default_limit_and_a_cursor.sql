\ir ../fixtures/helpers.sql
begin;
select plan(2);

-- A read that returns rows returns a bounded page: a row-limit argument with a default (so a
-- caller who names no limit still gets a page, not the table) and a cursor argument that names
-- where the next page starts (docs/security.md, "Bounded reads"). A new list function is checked
-- the day it is added. The exceptions return a bounded set by construction, each with its reason.
create temporary view public_lists as
  select p.oid, p.oid::regprocedure::text as fn, p.proname
  from pg_proc p
  where p.pronamespace = 'ai'::regnamespace and p.proname not like '\_%' and p.proretset;

create temporary table not_lists (proname name, why text);
insert into not_lists values
  ('append_messages', 'a write: returns the rows it appended, as many as the caller sent'),
  ('claim_job', 'a write: at most one job'),
  ('claim_jobs', 'a write: at most max_jobs (1 to 1000) jobs'),
  ('enqueue_jobs', 'a write: one job per job the caller sent (at most 5000)'),
  ('complete_jobs', 'a write: the jobs the caller named'),
  ('complete_and_claim', 'a write: the jobs the caller named, then at most max_jobs (0 to 1000) claimed'),
  ('renew_leases', 'a write: the jobs the caller named'),
  ('archive_sessions', 'a write: at most batch_size sessions'),
  ('get_checkpoint', 'one checkpoint'),
  ('job_attempts', 'one job''s attempts: at most its max_attempts'),
  ('delta_channel_history', 'the saver''s walk to the nearest stored value of the named channels: bounded by the DeltaChannel''s snapshot interval'),
  ('queue_stats', 'one row per queue (an aggregate; a tenant''s reads its own jobs only)'),
  ('archive_backlog', 'one row (an aggregate)'),
  ('usage_summary', 'an aggregate over [since, until) by the named groups, read through usage_records_owner_time'),
  ('queue_throughput', 'an aggregate: a row per queue and time bucket of [now - since, now)'),
  ('session_status_counts', 'an aggregate: a row per session status'),
  ('metrics', 'an aggregate: eleven rows per queue and three more'),
  ('get_memory', 'one memory item (or none)'),
  ('thread_run_status', 'a row per thread the caller named (at most 10000: a page of sessions)'),
  ('checkpoint_nodes', 'a row per checkpoint the caller named (at most 10000: the lineage the page drew)');

select is_empty(
  $$select l.fn from public_lists l
    where l.proname not in (select proname from not_lists)
      and not exists (select from unnest(coalesce((select proargnames from pg_proc where oid = l.oid), '{}')) with ordinality a(name, n)
                      where a.name in ('max_rows', 'max_chunks', 'max_threads')
                        and a.n > (select pronargs - pronargdefaults from pg_proc where oid = l.oid))$$,
  'every list function has a row limit with a default');
-- a walk whose start is already an argument: the next page starts there
create temporary table walks (proname name, why text);
insert into walks values
  ('checkpoint_lineage', 'the next page of ancestors: checkpoint_id = the last row''s parent_checkpoint_id'),
  -- LangGraph's BaseStore pages by offset (search ranks by relevance: no stable key to go on
  -- from); max_rows is bounded and the walk reads the caller's own key range (owner, ns, key)
  ('search_memory', 'LangGraph''s store contract: max_rows and skip (an offset) within the caller''s namespaces'),
  ('list_memory_namespaces', 'LangGraph''s store contract: max_rows and skip (an offset) within the caller''s namespaces');

select is_empty(
  $$select l.fn from public_lists l
    where l.proname not in (select proname from not_lists) and l.proname not in (select proname from walks)
      and not exists (select from unnest(coalesce((select proargnames from pg_proc where oid = l.oid), '{}')) a(name)
                      where a.name ~ '^(before|after)(_|$)')$$,
  'every list function takes a cursor (before... or after...)');

select * from finish();
rollback;

-- Deploy agent-state:operator_reads_functions to pg
-- requires: operator_reads
-- requires: queue
-- requires: checkpoints
-- requires: side_effects
-- requires: retention
--
-- The functions and triggers of operator reads (its tables, indexes and row rules:
-- deploy/operator_reads.sql). CREATE OR REPLACE throughout, so this change deploys over itself: after a
-- release, `sqitch rework operator_reads_functions` changes a function here (deploy/schema.sql, "Layout").
begin;

drop function ai.list_jobs(text, text, text, integer, bigint);
-- the runs page's filtered lists, which list_jobs and list_sessions call since 0.2.0
drop function ai.find_jobs(text, text, text, interval, text[], text, integer, bigint);
drop function ai.find_sessions(text, text, interval, text[], text, integer, text);
drop function ai._check_run_filters(interval, text[], text);
drop function ai._check_job_list(text, text, integer);
drop function ai.list_workers(integer, text, interval);
-- the bounded reads' cursors
drop function ai.list_sessions(text, text, integer, text);
drop function ai.session_timeline(text, integer, timestamptz, text, text);
drop function ai.checkpoint_tree(text, text, integer, text);
-- the console's story reads (issue 32)
drop function ai.session_timeline_newest(text, integer, timestamptz, text, text);
drop function ai.session_timeline_total(text);
drop function ai.thread_run_status(text[]);
drop function ai.checkpoint_nodes(text, text, text[]);
drop function ai._timeline_cursor(text, text, text);

create or replace function ai.list_sessions(status text default null, owner text default null, max_rows integer default 100)
returns setof ai.agent_sessions
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_status alias for $1;
  a_owner alias for $2;
  a_max_rows alias for $3;
begin
  perform ai._check_limit(a_max_rows, 'max_rows');
  if a_status is not null and a_status not in ('active', 'waiting', 'completed', 'failed', 'cancelled') then
    raise exception using errcode = 'AS002',
      message = format('status %s is not active, waiting, completed, failed or cancelled', quote_literal(a_status));
  end if;
  if a_owner is not null then
    perform ai._check_text(a_owner, 'owner');
  end if;
  return query
  select s.* from ai.agent_sessions s
  where (a_status is null or s.status = a_status) and (a_owner is null or s.owner = a_owner)
  order by s.created_at desc, s.thread_id desc
  limit a_max_rows;
end
$$;
comment on function ai.list_sessions(text, text, integer) is
  'Sessions newest first (by created_at, then thread_id), of one status and/or one owner when given, at most max_rows (1 to 10000). RLS applies: a tenant lists its own, a service acting for nobody every owner''s. AS002 bad status, owner or max_rows.';

create or replace function ai.list_jobs(queue text default null, status text default null, thread_id text default null,
                             max_rows integer default 100)
returns setof ai.agent_jobs
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_queue alias for $1;
  a_status alias for $2;
  a_thread_id alias for $3;
  a_max_rows alias for $4;
begin
  perform ai._check_limit(a_max_rows, 'max_rows');
  if a_status is not null
     and a_status not in ('PENDING', 'IN_PROGRESS', 'AWAITING_HUMAN', 'COMPLETED', 'FAILED', 'CANCELLED') then
    raise exception using errcode = 'AS002',
      message = format('status %s is not PENDING, IN_PROGRESS, AWAITING_HUMAN, COMPLETED, FAILED or CANCELLED',
                       quote_literal(a_status));
  end if;
  if a_queue is not null then
    perform ai._check_text(a_queue, 'queue');
  end if;
  if a_thread_id is not null then
    perform ai._check_thread_id(a_thread_id);
  end if;
  return query
  select j.* from ai.agent_jobs j
  where (a_queue is null or j.queue = a_queue) and (a_status is null or j.status = a_status)
    and (a_thread_id is null or j.thread_id = a_thread_id)
  order by j.job_id desc
  limit a_max_rows;
end
$$;
comment on function ai.list_jobs(text, text, text, integer) is
  'Jobs of the queue table newest first (by job_id), of one queue, status and/or thread when given, at most max_rows (1 to 10000). Archived jobs (ai.archive_jobs) are not listed. RLS applies: a tenant lists its own, a service acting for nobody every owner''s. AS002 bad argument.';

create or replace function ai.session_timeline(thread_id text, max_rows integer default 1000)
returns table (created_at timestamptz, item text, ref text, label text, detail jsonb)
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_max_rows alias for $2;
begin
  perform ai._session_owner(a_thread_id);  -- AS002 bad id, AS001 unknown (or another tenant's)
  perform ai._check_limit(a_max_rows, 'max_rows');
  -- Each source contributes at most max_rows of its oldest rows (by its own index), then the
  -- merged list is cut to max_rows; ties in time go jobs, messages, checkpoints, events, side effects.
  return query
  select t.created_at, t.item, t.ref, t.label, t.detail
  from (
    (select j.created_at, 'job'::text as item, j.job_id::text as ref, j.status as label,
            jsonb_build_object('queue', j.queue, 'attempts', j.attempts, 'max_attempts', j.max_attempts,
                               'last_error', j.last_error, 'finished_at', j.finished_at) as detail,
            1 as rank, j.job_id as n, ''::text as k
     from ai.agent_jobs j where j.thread_id = a_thread_id order by j.job_id limit a_max_rows)
    union all
    (select m.created_at, 'message', m.seq::text, m.role,
            jsonb_build_object('role', m.role, 'content', m.content, 'turn', m.turn, 'token_count', m.token_count),
            2, m.seq, ''
     from ai.session_messages m where m.thread_id = a_thread_id order by m.seq limit a_max_rows)
    union all
    (select c.created_at, 'checkpoint', c.checkpoint_id::text, coalesce(c.metadata ->> 'source', ''),
            jsonb_build_object('checkpoint_ns', c.checkpoint_ns, 'parent_checkpoint_id', c.parent_checkpoint_id,
                               'metadata', c.metadata),
            3, 0::bigint, c.checkpoint_id::text
     from ai.checkpoints c where c.thread_id = a_thread_id order by c.created_at, c.checkpoint_id limit a_max_rows)
    union all
    (select e.created_at, 'event', e.event_id::text, e.kind, e.payload, 4, e.event_id, ''
     from ai.session_events e where e.thread_id = a_thread_id order by e.event_id limit a_max_rows)
    union all
    (select s.created_at, 'side_effect', s.idempotency_key, s.status,
            jsonb_build_object('request', s.request, 'result', s.result, 'attempt', s.attempt,
                               'takeovers', s.takeovers, 'job_id', s.job_id, 'finished_at', s.finished_at),
            5, 0::bigint, s.idempotency_key
     from ai.side_effects s where s.thread_id = a_thread_id order by s.created_at, s.idempotency_key limit a_max_rows)
  ) t
  order by t.created_at, t.rank, t.n, t.k
  limit a_max_rows;
end
$$;
comment on function ai.session_timeline(text, integer) is
  'One thread''s history oldest first, at most max_rows (1 to 10000): its jobs (ref job_id, label status), messages (seq, role), checkpoints of every namespace (checkpoint_id, metadata source), events (event_id, kind) and side effects (idempotency key, status), each with a detail document. AS001 unknown thread (or another tenant''s), AS002 bad argument.';

create or replace function ai.checkpoint_tree(thread_id text, checkpoint_ns text default '', max_rows integer default 1000)
returns table (checkpoint_id text, parent_checkpoint_id text, created_at timestamptz, metadata jsonb, is_current boolean)
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_ns alias for $2;
  a_max_rows alias for $3;
  v_current text;
begin
  perform ai._session_owner(a_thread_id);
  perform ai._check_checkpoint_ns(a_ns);
  perform ai._check_limit(a_max_rows, 'max_rows');
  select s.current_checkpoint_id into v_current from ai.agent_sessions s where s.thread_id = a_thread_id;
  return query
  select c.checkpoint_id::text, c.parent_checkpoint_id::text, c.created_at, c.metadata,
         (a_ns = '' and c.checkpoint_id = v_current)
  from (select x.checkpoint_id, x.parent_checkpoint_id, x.created_at, x.metadata
        from ai.checkpoints x
        where x.thread_id = a_thread_id and x.checkpoint_ns = a_ns
        order by x.checkpoint_id desc
        limit a_max_rows) c
  order by c.checkpoint_id;
end
$$;
comment on function ai.checkpoint_tree(text, text, integer) is
  'Every checkpoint of one namespace of a thread (the newest max_rows, 1 to 10000), oldest first, with its parent: the tree of branches a client draws. is_current marks the session''s current checkpoint (root namespace). A parent outside the rows returned (older, or pruned) is still named. AS001 unknown thread (or another tenant''s), AS002 bad argument.';

create or replace function ai.archive_backlog(older_than interval default '90 days', jobs_older_than interval default '1 day')
returns table (sessions bigint, jobs bigint)
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_older_than alias for $1;
  a_jobs_older_than alias for $2;
  v_now timestamptz := ai.now();
begin
  if a_older_than is null or a_older_than < interval '0' or a_jobs_older_than is null or a_jobs_older_than < interval '0' then
    raise exception using errcode = 'AS002',
      message = format('older_than and jobs_older_than must be non-negative intervals, not %s and %s',
                       coalesce(a_older_than::text, 'NULL'), coalesce(a_jobs_older_than::text, 'NULL'));
  end if;
  -- The same conditions as ai.archive_sessions and ai.archive_jobs.
  return query
  select (select count(*) from ai.agent_sessions s
          where s.completed_at is not null and s.completed_at < v_now - a_older_than),
         (select count(*) from ai.agent_jobs j
          where j.status in ('COMPLETED', 'FAILED', 'CANCELLED') and j.finished_at <= v_now - a_jobs_older_than);
end
$$;
comment on function ai.archive_backlog(interval, interval) is
  'How many finished sessions ai.archive_sessions(older_than) and finished jobs ai.archive_jobs(jobs_older_than) would move now (a progress bar''s total, a monitoring gauge). For ai_service. AS002 bad interval.';

revoke execute on function ai.list_sessions(text, text, integer), ai.list_jobs(text, text, text, integer),
  ai.session_timeline(text, integer), ai.checkpoint_tree(text, text, integer), ai.archive_backlog(interval, interval)
from public;
grant execute on function ai.list_sessions(text, text, integer), ai.list_jobs(text, text, text, integer),
  ai.session_timeline(text, integer), ai.checkpoint_tree(text, text, integer)
to ai_user, ai_service;
grant execute on function ai.archive_backlog(interval, interval) to ai_service;

commit;

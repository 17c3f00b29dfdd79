-- Deploy agent-state:compaction_functions to pg
-- Reworked after v0.1.0; the tagged script is deploy/compaction_functions@v0.1.0.sql.
-- requires: compaction
-- requires: messages_functions
--
-- The functions and triggers of compaction (its tables, indexes and row rules:
-- deploy/compaction.sql). CREATE OR REPLACE throughout, so this change deploys over itself: after a
-- release, `sqitch rework compaction_functions` changes a function here (deploy/schema.sql, "Layout").
begin;

create or replace function ai._newest_summary(thread_id text) returns ai.session_messages
language sql stable
as $$
  select * from ai.session_messages m
  where m.thread_id = _newest_summary.thread_id and m.role = 'system' and m.content ? 'compaction'
  order by m.seq desc
  limit 1
$$;
comment on function ai._newest_summary(text) is 'Internal: the newest summary message of a thread, or NULL.';

create or replace function ai.context_window(thread_id text, window_tokens integer, keep_last integer default 20,
                                  threshold real default 0.7)
returns ai.context_window
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  v_last bigint;
  v_summary ai.session_messages;
  v_through bigint;
  w ai.context_window;
begin
  perform ai._check_thread_id(a_thread_id);
  if window_tokens is null or window_tokens < 1 then
    raise exception using errcode = 'AS002',
      message = format('window_tokens must be 1 or more, not %s', coalesce(window_tokens::text, 'NULL'));
  end if;
  if keep_last is null or keep_last < 0 then
    raise exception using errcode = 'AS002',
      message = format('keep_last must be 0 or more, not %s', coalesce(keep_last::text, 'NULL'));
  end if;
  if threshold is null or threshold <= 0 or threshold > 1 then
    raise exception using errcode = 'AS002',
      message = format('threshold must be in (0, 1], not %s', coalesce(threshold::text, 'NULL'));
  end if;

  perform from ai.agent_sessions s where s.thread_id = a_thread_id;
  if not found then
    raise exception using errcode = 'AS001', message = format('thread %s not found', a_thread_id);
  end if;
  -- the newest seq (computed: the session row does not hold it)
  v_last := coalesce((select m.seq from ai.session_messages m where m.thread_id = a_thread_id
                      order by m.seq desc limit 1), 0);

  v_summary := ai._newest_summary(a_thread_id);
  v_through := coalesce((v_summary.content -> 'compaction' ->> 'through_seq')::bigint, 0);

  with tail as (
    select m.seq, m.role, m.content, m.token_count,
           count(*) over (order by m.seq desc rows between unbounded preceding and current row) as from_end
    from ai.session_messages m
    where m.thread_id = a_thread_id and m.seq > v_through
      and not (m.role = 'system' and m.content ? 'compaction')
  ),
  window_rows as (
    select v_summary.seq as seq, v_summary.role as role, v_summary.content as content,
           v_summary.token_count as token_count, true as is_summary
    where v_summary.seq is not null
    union all
    select seq, role, content, token_count, false from tail
  )
  select coalesce((select jsonb_agg(jsonb_build_object('seq', r.seq, 'role', r.role, 'content', r.content,
                                                        'token_count', r.token_count, 'is_summary', r.is_summary)
                                    order by r.is_summary desc, r.seq)
                   from window_rows r), '[]'::jsonb),
         coalesce((select sum(r.token_count) from window_rows r), 0),
         (select max(t.seq) from tail t where t.from_end > keep_last)
  into w.messages, w.total_tokens, w.compact_through_seq;

  w.compaction_due := w.total_tokens > threshold * window_tokens;
  w.compact_from_seq := case when w.compact_through_seq is not null then v_through + 1 end;
  w.summary_through_seq := v_through;
  w.last_seq := v_last;
  return w;
end
$$;
comment on function ai.context_window(text, integer, integer, real) is
  'The messages to send to the model now: the newest summary (a system message) first, then every message after what it covers. compaction_due is true when their tokens exceed threshold x window_tokens; compact_from_seq..compact_through_seq is the range a new summary should cover (all but the last keep_last messages), NULL when there is nothing to compact. One round trip; reads the summary through a partial index and the tail through the primary key. AS001 unknown thread, AS002 bad argument.';

create or replace function ai.record_compaction(thread_id text, summary text, through_seq bigint,
                                     summary_tokens integer default null)
returns ai.appended_message
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_summary alias for $2;
  a_through alias for $3;
  v_key text := 'compaction:' || a_through::text;
  v_last bigint;
  v_prev bigint;
begin
  perform ai._check_thread_id(a_thread_id);
  perform ai._check_text(a_summary, 'summary', ai._max_document_bytes());
  if a_through is null or a_through < 1 then
    raise exception using errcode = 'AS002',
      message = format('through_seq must be 1 or more, not %s', coalesce(a_through::text, 'NULL'));
  end if;

  -- Serialize compactions of this thread on the session row, so that two summarizers racing
  -- cannot both pass the staleness check (appends no longer take that row: a compaction is rare,
  -- an append is every step). The newest seq is read after the lock.
  perform from ai.agent_sessions s where s.thread_id = a_thread_id for no key update;
  if not found then
    raise exception using errcode = 'AS001', message = format('thread %s not found', a_thread_id);
  end if;
  v_last := coalesce((select m.seq from ai.session_messages m where m.thread_id = a_thread_id
                      order by m.seq desc limit 1), 0);

  -- A retry of a stored compaction returns it (or AS005 if the summary text differs).
  if not exists (select from ai.session_messages m where m.thread_id = a_thread_id and m.idempotency_key = v_key) then
    if a_through > v_last then
      raise exception using errcode = 'AS002',
        message = format('through_seq %s is past the last message (%s) of thread %s', a_through, v_last, a_thread_id);
    end if;
    v_prev := coalesce(((ai._newest_summary(a_thread_id)).content -> 'compaction' ->> 'through_seq')::bigint, 0);
    if v_prev >= a_through then
      raise exception using errcode = 'AS040',
        message = format('thread %s is already compacted through seq %s; a summary through %s is stale',
                         a_thread_id, v_prev, a_through);
    end if;
  else
    v_prev := coalesce((select (m.content -> 'compaction' ->> 'from_seq')::bigint - 1 from ai.session_messages m
                        where m.thread_id = a_thread_id and m.idempotency_key = v_key), 0);
  end if;

  return ai.append_message_idempotent(
    a_thread_id, 'system',
    pg_catalog.jsonb_build_object('compaction', pg_catalog.jsonb_build_object('from_seq', v_prev + 1, 'through_seq', a_through),
                                  'text', a_summary),
    null, v_key, summary_tokens);
end
$$;
comment on function ai.record_compaction(text, text, bigint, integer) is
  'Stores a summary of a thread''s messages up to through_seq (chained onto the previous summary) as a new system message; the originals stay. summary_tokens defaults to the estimate. A retry returns the stored summary (inserted = false). AS001 unknown thread, AS002 bad argument or through_seq past the last message, AS004 session finished, AS005 same range with another summary, AS040 a newer compaction already covers as much.';

revoke execute on function ai._newest_summary(text), ai.context_window(text, integer, integer, real),
  ai.record_compaction(text, text, bigint, integer) from public;
grant execute on function ai.context_window(text, integer, integer, real),
  ai.record_compaction(text, text, bigint, integer)
to ai_user, ai_service;

commit;

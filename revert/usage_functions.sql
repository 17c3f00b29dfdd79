-- Deploy agent-state:usage_functions to pg
-- requires: usage
--
-- The functions and triggers of usage (its tables, indexes and row rules:
-- deploy/usage.sql). CREATE OR REPLACE throughout, so this change deploys over itself: after a
-- release, `sqitch rework usage_functions` changes a function here (deploy/schema.sql, "Layout").
begin;

create or replace function ai.record_usage(
  thread_id text, idempotency_key text, model text, input_tokens bigint, output_tokens bigint,
  cost numeric, details jsonb default '{}', job_id bigint default null, fencing_token bigint default null)
returns ai.recorded_usage
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_key alias for $2;
  a_model alias for $3;
  a_in alias for $4;
  a_out alias for $5;
  a_cost alias for $6;
  a_details alias for $7;
  a_job alias for $8;
  a_token alias for $9;
  v_owner text;
  u ai.usage_records;
begin
  perform ai._check_side_effect_args(a_thread_id, a_key, a_job, a_token, false);
  perform ai._check_text(a_model, 'model');
  if a_in is null or a_in < 0 or a_out is null or a_out < 0 then
    raise exception using errcode = 'AS002',
      message = format('input_tokens and output_tokens must be 0 or more, not %s and %s',
                       coalesce(a_in::text, 'NULL'), coalesce(a_out::text, 'NULL'));
  end if;
  if a_cost is null or a_cost < 0 or a_cost = 'NaN'::numeric or a_cost = 'Infinity'::numeric then
    raise exception using errcode = 'AS002',
      message = format('cost must be a number, 0 or more, not %s', coalesce(a_cost::text, 'NULL'));
  end if;
  perform ai._check_document(a_details, 'details', must_be_object => true);
  perform ai._fence_side_effect(a_thread_id, a_job, a_token);
  v_owner := ai._session_owner(a_thread_id);

  insert into ai.usage_records as r (thread_id, owner, idempotency_key, model, input_tokens, output_tokens, cost,
                                     details, job_id, created_at)
  values (a_thread_id, v_owner, a_key, a_model, a_in, a_out, a_cost, a_details, a_job, ai.now())
  on conflict (thread_id, idempotency_key) do nothing
  returning * into u;
  if found then
    return (u.thread_id, u.usage_id, u.owner, u.idempotency_key, u.model, u.input_tokens, u.output_tokens,
            u.cost, u.details, u.job_id, u.created_at, true)::ai.recorded_usage;
  end if;

  -- A retry (or a concurrent twin that committed first): the original, if the figures agree.
  select * into u from ai.usage_records r where r.thread_id = a_thread_id and r.idempotency_key = a_key;
  if u.model <> a_model or u.input_tokens <> a_in or u.output_tokens <> a_out or u.cost <> a_cost
     or u.details <> a_details then
    raise exception using errcode = 'AS005',
      message = format('usage key %s of thread %s was recorded with other figures (usage %s)',
                       a_key, a_thread_id, u.usage_id);
  end if;
  return (u.thread_id, u.usage_id, u.owner, u.idempotency_key, u.model, u.input_tokens, u.output_tokens,
          u.cost, u.details, u.job_id, u.created_at, false)::ai.recorded_usage;
end
$$;
comment on function ai.record_usage(text, text, text, bigint, bigint, numeric, jsonb, bigint, bigint) is
  'Records one metered model call of a thread (tokens, exact cost, details object) under an idempotency key unique per thread, and returns it with inserted = true. A retry with the same key and figures returns the original with inserted = false and writes nothing. job_id + fencing_token make it a fenced write. AS001 unknown thread, AS002 bad argument, AS003 details too large, AS005 key recorded with other figures, AS006 lease lost.';

create or replace function ai.usage_summary(since timestamptz, until timestamptz, group_by text[] default array['owner'])
returns table (owner text, thread_id text, model text, day date, records bigint, input_tokens numeric,
               output_tokens numeric, cost numeric)
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_by_owner boolean;
  v_by_thread boolean;
  v_by_model boolean;
  v_by_day boolean;
begin
  if since is null or until is null or since > until then
    raise exception using errcode = 'AS002',
      message = format('since and until must be timestamps with since <= until, not %s and %s',
                       coalesce(since::text, 'NULL'), coalesce(until::text, 'NULL'));
  end if;
  if group_by is null or not group_by <@ array['owner', 'thread', 'model', 'day'] then
    raise exception using errcode = 'AS002',
      message = format('group_by must be a subset of {owner, thread, model, day}, not %s', coalesce(group_by::text, 'NULL'));
  end if;
  v_by_owner := 'owner' = any (group_by);
  v_by_thread := 'thread' = any (group_by);
  v_by_model := 'model' = any (group_by);
  v_by_day := 'day' = any (group_by);

  -- One static query: a dimension not asked for is NULL, so it groups as one value. Days are UTC.
  return query
    select case when v_by_owner then r.owner end,
           case when v_by_thread then r.thread_id end,
           case when v_by_model then r.model end,
           case when v_by_day then (r.created_at at time zone 'UTC')::date end,
           count(*), sum(r.input_tokens)::numeric, sum(r.output_tokens)::numeric, sum(r.cost)
    from ai.usage_records r
    where r.created_at >= since and r.created_at < until
    group by 1, 2, 3, 4
    order by 1, 2, 3, 4;
end
$$;
comment on function ai.usage_summary(timestamptz, timestamptz, text[]) is
  'Sums usage records with since <= created_at < until, grouped by any subset of owner, thread, model and day (UTC); columns not grouped by are NULL. A tenant sees its own records, a service every tenant''s. AS002 bad argument.';

revoke execute on function ai.record_usage(text, text, text, bigint, bigint, numeric, jsonb, bigint, bigint),
  ai.usage_summary(timestamptz, timestamptz, text[]) from public;
grant execute on function ai.record_usage(text, text, text, bigint, bigint, numeric, jsonb, bigint, bigint),
  ai.usage_summary(timestamptz, timestamptz, text[]) to ai_user, ai_service;

commit;

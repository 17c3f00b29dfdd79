-- Deploy agent-state:retrievals_functions to pg
-- requires: retrievals
-- requires: messages_functions
--
-- The functions and triggers of retrievals (its tables, indexes and row rules:
-- deploy/retrievals.sql). CREATE OR REPLACE throughout, so this change deploys over itself: after a
-- release, `sqitch rework retrievals_functions` changes a function here (deploy/schema.sql, "Layout").
begin;

create or replace function ai.record_retrieval(thread_id text, turn integer, documents jsonb, idempotency_key text default null,
                                    job_id bigint default null, fencing_token bigint default null)
returns ai.recorded_retrieval
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_turn alias for $2;
  a_documents alias for $3;
  a_key alias for $4;
  a_job alias for $5;
  a_token alias for $6;
  v_key text;
  v_owner text;
  r ai.turn_retrievals;
begin
  perform ai._check_thread_id(a_thread_id);
  if a_turn is null then
    raise exception using errcode = 'AS002', message = 'turn must not be NULL';
  end if;
  perform ai._check_document(a_documents, 'documents');
  if pg_catalog.jsonb_typeof(a_documents) <> 'array'
     or exists (select from pg_catalog.jsonb_array_elements(a_documents) d where pg_catalog.jsonb_typeof(d) <> 'object') then
    raise exception using errcode = 'AS002', message = 'documents must be a JSON array of objects';
  end if;
  if a_key is not null then
    perform ai._check_text(a_key, 'idempotency_key');
  end if;
  perform ai._check_job_token(a_job, a_token);
  perform ai._fence_side_effect(a_thread_id, a_job, a_token);
  v_owner := ai._session_owner(a_thread_id);
  v_key := coalesce(a_key, 'retrieval:' || pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(
             pg_catalog.jsonb_build_array(a_thread_id, a_turn, a_documents)::text, 'UTF8')), 'hex'));

  insert into ai.turn_retrievals as t (thread_id, owner, turn, idempotency_key, documents, created_at)
  values (a_thread_id, v_owner, a_turn, v_key, a_documents, ai.now())
  on conflict (thread_id, idempotency_key) do nothing
  returning * into r;
  if found then
    return (r.thread_id, r.retrieval_id, r.owner, r.turn, r.idempotency_key, r.documents, r.created_at, true)::ai.recorded_retrieval;
  end if;
  select * into r from ai.turn_retrievals t where t.thread_id = a_thread_id and t.idempotency_key = v_key;
  if r.turn <> a_turn or r.documents <> a_documents then
    raise exception using errcode = 'AS005',
      message = format('retrieval key %s of thread %s was used for other documents (retrieval %s)',
                       v_key, a_thread_id, r.retrieval_id);
  end if;
  return (r.thread_id, r.retrieval_id, r.owner, r.turn, r.idempotency_key, r.documents, r.created_at, false)::ai.recorded_retrieval;
end
$$;
comment on function ai.record_retrieval(text, integer, jsonb, text, bigint, bigint) is
  'Keeps the documents (a JSON array of objects, up to 1 MiB) retrieved for a turn of a thread, and returns the row with inserted = true. The key defaults to a hash of thread, turn and documents; a retry returns the original with inserted = false. job_id + fencing_token make it a fenced write. AS001 unknown thread, AS002 bad argument, AS003 too large, AS005 key used for other documents, AS006 lease lost.';

create or replace function ai.get_turn_context(thread_id text, turn integer) returns ai.turn_context
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_turn alias for $2;
  c ai.turn_context;
begin
  if a_turn is null then
    raise exception using errcode = 'AS002', message = 'turn must not be NULL';
  end if;
  perform ai._session_owner(a_thread_id);
  c.thread_id := a_thread_id;
  c.turn := a_turn;
  select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('seq', m.seq, 'role', m.role, 'content', m.content,
                                                                     'token_count', m.token_count, 'created_at', m.created_at)
                                       order by m.seq), '[]')
  into c.messages
  from ai.session_messages m where m.thread_id = a_thread_id and m.turn = a_turn;
  select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('retrieval_id', r.retrieval_id, 'documents', r.documents,
                                                                     'created_at', r.created_at)
                                       order by r.retrieval_id), '[]')
  into c.retrievals
  from ai.turn_retrievals r where r.thread_id = a_thread_id and r.turn = a_turn;
  return c;
end
$$;
comment on function ai.get_turn_context(text, integer) is
  'A turn of a thread in one round trip: its messages (those with this turn number) and the documents retrieved for it. AS001 unknown thread, AS002 bad argument.';

revoke execute on function ai.record_retrieval(text, integer, jsonb, text, bigint, bigint),
  ai.get_turn_context(text, integer) from public;
grant execute on function ai.record_retrieval(text, integer, jsonb, text, bigint, bigint),
  ai.get_turn_context(text, integer) to ai_user, ai_service;

commit;

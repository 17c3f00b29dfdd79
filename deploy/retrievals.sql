-- Deploy agent-state:retrievals to pg
-- requires: side_effects
-- requires: retention
--
-- What the model was given. An assistant turn is often grounded in retrieved documents (search
-- hits, RAG chunks, tool lookups); ai.turn_retrievals keeps them per turn, so an audit or a replay
-- sees the same context the model saw. A retrieval names the turn (the `turn` number the turn's
-- messages carry) and holds the documents as a JSON array of objects (ids, scores, text or
-- references: the caller's shape). Like messages it is append-only and keyed: a retried record
-- returns the original (the default key is a hash of thread, turn and documents).
-- ai.get_turn_context returns a turn's messages with its retrievals in one round trip.
begin;

create table ai.turn_retrievals (
  thread_id text not null,
  retrieval_id bigint generated always as identity,
  owner text not null,
  turn integer not null,
  idempotency_key text not null check (pg_catalog.char_length(idempotency_key) between 1 and 255),
  documents jsonb not null check (pg_catalog.jsonb_typeof(documents) = 'array'),
  created_at timestamptz not null default ai.now(),
  primary key (thread_id, retrieval_id),
  unique (thread_id, idempotency_key),
  foreign key (thread_id, owner) references ai.agent_sessions (thread_id, owner) on delete cascade
);
comment on table ai.turn_retrievals is 'The documents retrieved for each turn of a thread: what the model was given.';
create index turn_retrievals_turn on ai.turn_retrievals (thread_id, turn);

alter table ai.turn_retrievals enable row level security;
alter table ai.turn_retrievals force row level security;
create policy turn_retrievals_by_owner on ai.turn_retrievals
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));
-- No table privilege for any role: the functions (SECURITY DEFINER) are the only way in.

create table ai_archive.turn_retrievals (like ai.turn_retrievals including defaults including constraints including indexes,
  foreign key (thread_id, owner) references ai_archive.agent_sessions (thread_id, owner) on delete cascade);
alter table ai_archive.turn_retrievals enable row level security;
alter table ai_archive.turn_retrievals force row level security;
create policy turn_retrievals_by_owner on ai_archive.turn_retrievals
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));
insert into ai._archived_tables (table_name, copy_order, order_by) values ('turn_retrievals', 120, 'retrieval_id');

create type ai.recorded_retrieval as (
  thread_id text, retrieval_id bigint, owner text, turn integer, idempotency_key text, documents jsonb,
  created_at timestamptz, inserted boolean
);
comment on type ai.recorded_retrieval is 'A retrieval row plus inserted: true when this call wrote it, false when it was a retry.';

create type ai.turn_context as (
  thread_id text,
  turn integer,
  messages jsonb,    -- [{seq, role, content, token_count, created_at}] of the turn, in order
  retrievals jsonb   -- [{retrieval_id, documents, created_at}] of the turn, in order
);
comment on type ai.turn_context is 'One turn of a thread: its messages and the documents retrieved for it.';

commit;

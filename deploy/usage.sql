-- Deploy agent-state:usage to pg
-- requires: side_effects
-- requires: retention
--
-- Usage metering, keyed for exactly-once billing. Every model call an agent makes is one row of
-- ai.usage_records: the model, input and output tokens, the cost as an exact numeric (never a
-- float: money adds up to the cent), and free-form details. The row is keyed per thread by an
-- idempotency key, so a retried record (a lost reply, a resumed run that derives the same key
-- from thread, job, step and call index) returns the original row and writes nothing; the same key
-- with other figures is AS005, never a second charge. A record made for a job is fenced like
-- every worker write (job_id + fencing_token): a zombie's record is refused with AS006.
--
-- Reading: ai.usage_summary sums records over a time range grouped by any of owner, thread, model
-- and day. RLS scopes it to the caller's own rows; a service (ai_service) sees every tenant's.
-- The index on (owner, recorded_at) serves a tenant's range; (recorded_at) serves a service's.
begin;

create table ai.usage_records (
  thread_id text not null,
  usage_id bigint generated always as identity,
  owner text not null,
  idempotency_key text not null check (pg_catalog.char_length(idempotency_key) between 1 and 255),
  model text not null check (pg_catalog.char_length(model) between 1 and 255),
  input_tokens bigint not null check (input_tokens >= 0),
  output_tokens bigint not null check (output_tokens >= 0),
  cost numeric not null check (cost >= 0 and cost <> 'Infinity' and cost <> 'NaN'),
  details jsonb not null default '{}',
  job_id bigint,
  recorded_at timestamptz not null default ai.now(),
  primary key (thread_id, usage_id),
  unique (thread_id, idempotency_key),
  foreign key (thread_id, owner) references ai.agent_sessions (thread_id, owner) on delete cascade
);
comment on table ai.usage_records is 'One row per metered model call: tokens and exact cost, unique per thread by idempotency key.';
comment on column ai.usage_records.cost is 'Exact numeric, in the caller''s currency unit; never a float.';

create index usage_records_owner_time on ai.usage_records (owner, recorded_at);
create index usage_records_time on ai.usage_records (recorded_at);

alter table ai.usage_records enable row level security;
alter table ai.usage_records force row level security;
create policy usage_records_by_owner on ai.usage_records
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));
-- Append-only, as messages are. No table privilege for any role: the functions (SECURITY DEFINER)
-- are the only way in (docs/security.md).

-- Archived with its session.
create table ai_archive.usage_records (like ai.usage_records including defaults including constraints including indexes,
  foreign key (thread_id, owner) references ai_archive.agent_sessions (thread_id, owner) on delete cascade);
alter table ai_archive.usage_records enable row level security;
alter table ai_archive.usage_records force row level security;
create policy usage_records_by_owner on ai_archive.usage_records
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));
insert into ai._archived_tables (table_name, copy_order, order_by) values ('usage_records', 110, 'usage_id');

-- What record_usage returns: the row, and whether this call wrote it.
create type ai.recorded_usage as (
  thread_id text, usage_id bigint, owner text, idempotency_key text, model text, input_tokens bigint,
  output_tokens bigint, cost numeric, details jsonb, job_id bigint, recorded_at timestamptz, inserted boolean
);
comment on type ai.recorded_usage is 'A usage row plus inserted: true when this call wrote it, false when it was a retry.';

commit;

-- Deploy agent-state:session_items to pg
-- requires: messages
-- requires: compaction
-- requires: retention
--
-- A thread seen as a list of items, as agent SDK sessions want it (the OpenAI Agents SDK's
-- Session: get_items, add_items, pop_item, clear_session). Messages stay append-only: "removing"
-- an item hides it. ai.hidden_messages records which messages of a thread are hidden and when;
-- the originals stay in ai.session_messages for audit and replay, as they do after compaction.
--   append_messages       a batch of messages in one transaction (all or none), each through
--                         ai.append_message_idempotent, so a retried batch with the same keys
--                         writes nothing twice;
--   visible_messages      the newest n messages that are neither hidden nor compaction summaries,
--                         in order;
--   hide_last_message     hides the newest visible message and returns it (pop);
--   hide_messages         hides every visible message (clear).
-- The two hiding functions take the session row lock first, so concurrent pops of one thread
-- hide two different messages, never the same one twice.
begin;

create table ai.hidden_messages (
  thread_id text not null,
  seq bigint not null,
  owner text not null,
  hidden_at timestamptz not null default ai.now(),
  primary key (thread_id, seq),
  foreign key (thread_id, seq) references ai.session_messages (thread_id, seq) on delete cascade,
  foreign key (thread_id, owner) references ai.agent_sessions (thread_id, owner) on delete cascade
);
comment on table ai.hidden_messages is 'Messages hidden from ai.visible_messages (popped or cleared items); the messages themselves stay.';

alter table ai.hidden_messages enable row level security;
alter table ai.hidden_messages force row level security;
create policy hidden_messages_by_owner on ai.hidden_messages
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));
-- No table privilege for any role: the functions (SECURITY DEFINER) are the only way in.

-- Archived with its session, after the messages it points at.
create table ai_archive.hidden_messages (like ai.hidden_messages including defaults including constraints including indexes,
  foreign key (thread_id, owner) references ai_archive.agent_sessions (thread_id, owner) on delete cascade);
alter table ai_archive.hidden_messages enable row level security;
alter table ai_archive.hidden_messages force row level security;
create policy hidden_messages_by_owner on ai_archive.hidden_messages
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));
insert into ai._archived_tables (table_name, copy_order, order_by) values ('hidden_messages', 15, 'seq');

commit;

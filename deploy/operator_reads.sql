-- Deploy agent-state:operator_reads to pg
-- requires: sessions
--
-- The reads an operator (and the `agent-state` command line) needs that no function gave yet:
-- sessions and jobs listed newest first, one thread's timeline, a thread's checkpoint tree, and
-- how much retention would move. Tenants have no table privileges to read these by hand; each
-- read is a function, and row level security still narrows it to what the caller may see (a
-- tenant its own rows, a service acting for nobody every tenant's).
begin;

-- list_sessions without an owner: the newest sessions come straight off an index (with an owner,
-- agent_sessions_owner_created serves). created_at never changes, so unlike an index on
-- updated_at this one leaves the HOT updates of every append alone. It is made after retention's
-- twin of ai.agent_sessions, which so does not copy it (nothing lists the archive).
create index agent_sessions_created on ai.agent_sessions (created_at desc, thread_id desc);

commit;

-- Deploy agent-state:schema to pg
--
-- agent-state: durable, resumable state for long-running AI agents.
--
-- The model, in brief.
--   * A session (ai.agent_sessions) is one agent run, keyed by thread_id and owned by one tenant.
--     Everything else hangs off a session and carries (thread_id, owner), so that row level
--     security can isolate tenants with one cheap predicate and the schema can later be sharded
--     by thread.
--   * Messages (ai.session_messages) are the conversation: append-only, numbered 1, 2, 3, ... per
--     thread with no gap, each with an idempotency key so that a retried append returns the
--     original row instead of writing a second one.
--   * Events (ai.session_events) are the operator's stream: start, status changes, tool calls,
--     errors. They are not numbered per thread; their global id orders them.
--
-- Locks. An append locks its session row (FOR NO KEY UPDATE, via the UPDATE that bumps
-- last_seq) and nothing else, so appends to one thread are serialized, appends to different
-- threads never wait on each other, and no two appends can deadlock (each takes one lock).
-- A status change takes the same row lock. Events take no session lock at all.
--
-- Time. Every function reads the time through ai.now(), once, at its start. Tests freeze or
-- move that clock with the setting ai.frozen_now instead of sleeping.
--
-- Identity. Functions that touch tables run as the schema owner (SECURITY DEFINER, a role RLS
-- applies to); nobody else holds a table privilege. The caller is ai.calling_role() (the SET ROLE
-- role or the login role), and its tenant ai.current_owner(): that role's name, or, for a member
-- of ai_service, the end-user id the back-end set with ai.act_as(). See deploy/owners.sql.
--
-- Layout. Each object is defined once, in the change named for its concern, and that file holds
-- its current definition. A concern with tables has two changes: <concern> (deploy/queue.sql:
-- tables, indexes, types, policies, its error codes, and the row-rule functions its CHECKs call)
-- and <concern>_functions (deploy/queue_functions.sql: every other function, and the triggers).
-- A change of functions only (clock, owners, ulid) keeps its concern's name. Functions are
-- written with CREATE OR REPLACE and triggers with CREATE OR REPLACE TRIGGER (a constraint
-- trigger cannot be replaced: it is dropped if it exists and created again), so a functions
-- change deploys over itself: once a release is tagged, a function changes by
-- `sqitch rework <concern>_functions` (CONTRIBUTING.md) and the deploy file keeps its current
-- body. Tables, indexes and row rules change by a new change that alters them.
begin;

create schema ai;
comment on schema ai is 'agent-state: durable, resumable state for long-running AI agents';

commit;

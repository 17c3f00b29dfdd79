\ir ../fixtures/helpers.sql
begin;
select plan(4);

-- The row CHECK of ai.agent_sessions is one call of ai._check_session_row (no plain expression in front:
-- measured cheaper on this table, docs/benchmarks.md): creating a session, appending to it and finishing it pass through it; a bad row still gets
-- the message that names its rule.
set local track_functions = 'pl';
set local role tenant_a;
select ai.create_session('vs1') is not null as created \gset
select ai.append_message_idempotent('vs1', 'user', '{"text": "hi"}') is not null as appended \gset
select ai.set_session_status('vs1', 'completed') is not null as finished \gset
reset role;
select ok(coalesce(pg_stat_get_xact_function_calls('ai._check_session_row(text, text, jsonb, timestamptz)'::regprocedure), 0) > 0,
          'the valid rows written went through the row-rule function, which let them pass');

select throws_ok($$update ai.agent_sessions set completed_at = null where thread_id = 'vs1'$$,
                 '23514', 'completed_at is set exactly when a session is completed, failed or cancelled',
                 'a finished session without completed_at is refused by name');
select throws_ok($$update ai.agent_sessions set config = '[]' where thread_id = 'vs1'$$,
                 '23514', 'a session''s config is a JSON object', 'a config that is not an object is refused by name');
select throws_ok($$insert into ai.agent_sessions (thread_id, owner, status) values ('vs2', 'tenant_a', 'paused')$$,
                 '23514', 'session status ''paused'' is not active, waiting, completed, failed or cancelled',
                 'a raw insert with an unknown status is refused by name');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(3);

-- The row CHECK of ai.session_messages is one call of ai._check_message_row (no plain expression in front:
-- measured cheaper on this table, docs/benchmarks.md): appends pass through it; a bad row still gets the message that names its rule.
set local track_functions = 'pl';
set local role tenant_a;
select ai.create_session('vm1') is not null as created \gset
select ai.append_message_idempotent('vm1', 'user', '{"text": "hi"}') is not null as appended \gset
select count(*) = 2 as appended from ai.append_messages('vm1', '[{"role": "assistant", "content": {"text": "a"}}, {"role": "user", "content": {"text": "b"}}]') \gset
reset role;
select ok(coalesce(pg_stat_get_xact_function_calls('ai._check_message_row(bigint, text, integer, text)'::regprocedure), 0) > 0,
          'the valid rows written went through the row-rule function, which let them pass');

select throws_ok($$update ai.session_messages set token_count = -1 where thread_id = 'vm1' and seq = 1$$,
                 '23514', 'token_count must be 0 or more, not -1', 'a negative token count is refused by name');
select throws_ok($$update ai.session_messages set role = 'robot' where thread_id = 'vm1' and seq = 1$$,
                 '23514', 'message role ''robot'' is not system, user, assistant, tool_call or tool_result',
                 'an unknown role is refused by name');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(9);

set local track_functions = 'pl';  -- (superuser) the calls of this transaction: pg_stat_xact_user_functions
set local ai.frozen_now = '2030-01-01 00:00:00+00';
set local role tenant_a;
-- the same messages, appended by ai.append_messages to one thread and by a step to another
create function pg_temp.batch(k text) returns jsonb language sql as $$
  select pg_catalog.jsonb_build_array(
    pg_catalog.jsonb_build_object('role', 'assistant', 'content', pg_catalog.jsonb_build_object('content', 'one ' || k), 'idempotency_key', k || '-1'),
    pg_catalog.jsonb_build_object('role', 'tool_result', 'content', '"two"'::jsonb, 'idempotency_key', k || '-2'))
$$;
create function pg_temp.step(thread_id text, checkpoint_id text, parent text, messages jsonb) returns text language sql as $$
  select ai.put_checkpoint(thread_id, '', checkpoint_id, parent, 'test', '\x01', '{}', '{}', messages => messages)
$$;
select ai.create_session('t-by-append');
select ai.create_session('t-by-step');
select count(*) from ai.append_messages('t-by-append', '[{"role": "user", "content": "hi", "idempotency_key": "u"}]');
select count(*) from ai.append_messages('t-by-step', '[{"role": "user", "content": "hi", "idempotency_key": "u"}]');
select count(*) from ai.append_messages('t-by-append', pg_temp.batch('k'));
select pg_temp.step('t-by-step', 'c1', null, pg_temp.batch('k'));
-- (on a Citus formation append_message_idempotent is an SQL wrapper the planner inlines: its
-- body as deployed, ai._delegated_append_message_idempotent_body, is what runs and is counted)
select is((select sum(calls)::int from pg_stat_xact_user_functions where schemaname = 'ai'
            and funcname in ('append_message_idempotent', '_delegated_append_message_idempotent_body')),
          4, 'the step inserted its new messages in one statement, without a call per message');

create function pg_temp.rows(thread_id text) returns text language sql as $$
  select pg_catalog.array_agg(row(m.seq, m.role, m.content, m.token_count, m.turn, m.idempotency_key, m.created_at)::text
                              order by m.seq)::text
  from ai.get_messages(thread_id) m
$$;
select is(pg_temp.rows('t-by-step'), pg_temp.rows('t-by-append'),
          'a step''s messages are the rows ai.append_messages writes (seq, role, content, tokens, turn, key, time)');

select pg_temp.step('t-by-step', 'c2', 'c1', pg_temp.batch('k'));
select is((select count(*)::int from ai.get_messages('t-by-step')), 3, 'a retried step with the same keys writes no message');
select pg_temp.step('t-by-step', 'c3', 'c2', pg_temp.batch('k') || pg_temp.batch('n'));
select is((select array_agg(idempotency_key order by seq) from ai.get_messages('t-by-step')), array['u', 'k-1', 'k-2', 'n-1', 'n-2'],
          'a batch of stored and new keys appends only the new ones, in order');
select throws_ok($$select pg_temp.step('t-by-step', 'c4', 'c3', '[{"role": "assistant", "content": "other", "idempotency_key": "n-1"}]')$$,
                 'AS005', null, 'a stored key with another message raises AS005');
select throws_ok($$select pg_temp.step('t-by-step', 'c4', 'c3', '[{"role": "boss", "content": "x", "idempotency_key": "b"}]')$$,
                 'AS002', null, 'a bad role raises AS002');
select throws_ok($$select pg_temp.step('t-by-step', 'c4', 'c3', '[{"role": "user", "content": "x", "idempotency_key": "d"}, {"role": "user", "content": "y", "idempotency_key": "d"}]')$$,
                 'AS005', null, 'a key twice in one batch for two messages raises AS005, as ai.append_messages does');
select ai.set_session_status('t-by-step', 'completed');
select throws_ok($$select pg_temp.step('t-by-step', 'c4', 'c3', '[{"role": "user", "content": "late", "idempotency_key": "l"}]')$$,
                 'AS004', null, 'a finished session takes no message');
select is((select count(*)::int from ai.get_messages('t-by-step')), 5, 'none of the refused steps wrote a message');

select * from finish();
rollback;

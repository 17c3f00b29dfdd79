\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select ai.create_session('t-r');
select ai.append_message_idempotent('t-r', 'user', '"q1"', 1);
select ai.record_retrieval('t-r', 1, '[{"id": "d1"}]');
select ai.append_message_idempotent('t-r', 'assistant', '"a1"', 1);
select ai.append_message_idempotent('t-r', 'user', '"q2"', 2);
select ai.record_retrieval('t-r', 2, '[{"id": "d2"}]');

select is((select jsonb_path_query_array((ai.get_turn_context('t-r', 1)).messages, '$[*].content')),
          '["q1", "a1"]'::jsonb, 'turn 1 messages in order');
select is((select jsonb_path_query_array((ai.get_turn_context('t-r', 1)).retrievals, '$[*].documents[*].id')),
          '["d1"]'::jsonb, 'turn 1 retrievals only');
select is((ai.get_turn_context('t-r', 3)).messages, '[]'::jsonb, 'an empty turn');

select * from finish();
rollback;

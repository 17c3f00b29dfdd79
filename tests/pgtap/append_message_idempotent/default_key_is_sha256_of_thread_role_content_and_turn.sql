\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select ai.create_session('t-m');
select is((ai.append_message_idempotent('t-m', 'user', '{"text": "hi"}', 7)).idempotency_key,
          encode(sha256(convert_to(jsonb_build_array('t-m', 'user', '{"text": "hi"}'::jsonb, 7)::text, 'UTF8')), 'hex'),
          'the key is the hex sha256 of [thread_id, role, content, turn]');
select is((ai.append_message_idempotent('t-m', 'user', '{"text": "hi"}')).idempotency_key,
          ai.message_key('t-m', 'user', '{"text": "hi"}', null), 'a NULL turn is part of the key too');
select is((ai.append_message_idempotent('t-m', 'user', '"x"', 1, 'my-key')).idempotency_key, 'my-key',
          'an explicit key is used as given');

select * from finish();
rollback;

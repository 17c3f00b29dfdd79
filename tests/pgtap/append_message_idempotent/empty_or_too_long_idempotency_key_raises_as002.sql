\ir ../fixtures/helpers.sql
begin;
select plan(4);

set local role tenant_a;
select ai.create_session('t-m');
select throws_ok($$select ai.append_message_idempotent('t-m', 'user', '"x"', 1, '')$$, 'AS002',
  'idempotency_key must not be empty', 'empty key');
select throws_ok(format('select ai.append_message_idempotent(%L, %L, %L, 1, %L)', 't-m', 'user', '"x"', repeat('k', 256)), 'AS002',
  'idempotency_key is longer than 255 characters', 'key of 256 characters');
select is((ai.get_session('t-m')).last_seq, 0::bigint, 'nothing written');
select lives_ok(format('select ai.append_message_idempotent(%L, %L, %L, 1, %L)', 't-m', 'user', '"x"', repeat('k', 255)),
  'a key of 255 characters is fine');

select * from finish();
rollback;

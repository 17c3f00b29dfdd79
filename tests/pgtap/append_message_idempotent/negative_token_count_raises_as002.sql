\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select ai.create_session('t-m');
select throws_ok($$select ai.append_message_idempotent('t-m', 'user', '"x"', token_count => -1)$$, 'AS002',
  'token_count must not be negative, not -1', 'negative token_count');
select is((ai.get_session('t-m')).last_seq, 0::bigint, 'nothing written');
select is((ai.append_message_idempotent('t-m', 'user', '"x"', token_count => 0)).token_count, 0, 'zero is fine');

select * from finish();
rollback;

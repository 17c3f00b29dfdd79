\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select ai.create_session('t-m');
select is((ai.append_message_idempotent('t-m', 'user', '{"text": "hello world"}')).token_count,
          ai.estimate_tokens('{"text": "hello world"}'), 'without a count, the estimate is stored');
select is((ai.append_message_idempotent('t-m', 'user', '"x"', token_count => 123)).token_count, 123, 'a given count is stored');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select is(ai.message_key('t', 'user', '{"a": 1}', 2),
          encode(sha256(convert_to('["t", "user", {"a": 1}, 2]', 'UTF8')), 'hex'), 'sha256 of ["t", "user", {"a": 1}, 2]');
select is(ai.message_key('t', 'user', '"x"'),
          encode(sha256(convert_to('["t", "user", "x", null]', 'UTF8')), 'hex'), 'turn defaults to NULL (JSON null)');
select ok(ai.message_key('t', 'user', '"x"', 1) ~ '^[0-9a-f]{64}$', '64 lowercase hex digits');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(6);
set local role tenant_a;
select is(ai.idempotency_key('charge', 'u1', '100'), ai.idempotency_key('charge', 'u1', '100'), 'the same parts give the same key');
select is(length(ai.idempotency_key('x')), 64, 'a key is 64 hex characters');
select is(ai.idempotency_key('x'), encode(sha256(convert_to('1:x;', 'UTF8')), 'hex'), 'sha256 over length-prefixed parts');
select isnt(ai.idempotency_key('ab', 'c'), ai.idempotency_key('a', 'bc'), 'moving characters between parts changes the key');
select isnt(ai.idempotency_key('a', null), ai.idempotency_key('a', ''), 'NULL and the empty string differ');
select throws_ok($$select ai.idempotency_key(variadic array[]::text[])$$, 'AS002', 'idempotency_key needs at least one part', 'no parts raises AS002');
select * from finish();
rollback;

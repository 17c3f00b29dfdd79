\ir ../fixtures/helpers.sql
begin;
select plan(6);

set local role tenant_a;
select is(ai.estimate_tokens('{}'), 1, '{} is 2 bytes: 1 token');
select is(ai.estimate_tokens('"abcd"'), 2, '"abcd" is 6 bytes: 2 tokens');
select is(ai.estimate_tokens('"abcdef"'), 2, '"abcdef" is 8 bytes: 2 tokens');
select is(ai.estimate_tokens('"é"'), 1, '"é" is 4 bytes (UTF-8): 1 token');
select is(ai.estimate_tokens(to_jsonb(repeat('x', 398))), 100, '400 bytes: 100 tokens');
select is(ai.estimate_tokens(null), null::integer, 'NULL gives NULL');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/two_tenants.sql

set local role tenant_a;
select throws_ok($$select * from ai.checkpoint_tree('nope')$$, 'AS001', 'thread nope not found', 'an unknown thread');
select throws_ok($$select * from ai.checkpoint_tree('t-b')$$, 'AS001', 'thread t-b not found', 'another tenant''s thread');
select is_empty($$select * from ai.checkpoint_tree('t-a')$$, 'a thread without checkpoints has an empty tree');

select * from finish();
rollback;

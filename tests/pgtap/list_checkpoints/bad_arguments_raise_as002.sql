\ir ../fixtures/helpers.sql
begin;
select plan(3);
set local role tenant_a;

select throws_ok($$select * from ai.list_checkpoints('t', '', max_rows => -1)$$, 'AS002', null, 'negative max_rows');
select throws_ok($$select * from ai.list_checkpoints('t', '', metadata_filter => '[]')$$, 'AS002', null, 'filter not an object');
select throws_ok($$select * from ai.list_checkpoints('', '')$$, 'AS002', null, 'empty thread_id');

select * from finish();
rollback;

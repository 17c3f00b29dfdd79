\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(4);
set local role tenant_a;
select pg_temp.chain('t-list', 5);
select pg_temp.put_ckpt('t-list', 'x1', null, 'child:1');

select is(array(select checkpoint_id from ai.list_checkpoints('t-list', '')),
          array['c000005', 'c000004', 'c000003', 'c000002', 'c000001'], 'newest first, one namespace');
select is(array(select checkpoint_id from ai.list_checkpoints('t-list', '', before => 'c000004', max_rows => 2)),
          array['c000003', 'c000002'], 'before a cursor, at most max_rows');
select is((select count(*)::int from ai.list_checkpoints('t-list')), 6, 'NULL namespace: all of them');
select is(array(select checkpoint_id from ai.list_checkpoints('t-list', '', metadata_filter => '{"step": 2}')),
          array['c000002'], 'metadata filter');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(3);
set local role tenant_a;
-- c1 - c2 - c3 - c4, then a time-travel replay from c2: c2 - r5 - r6 (ids newer than c4)
select pg_temp.chain('t-tree', 4);
select pg_temp.put_ckpt('t-tree', 'r5', 'c000002');
select pg_temp.put_ckpt('t-tree', 'r6', 'r5');

select is(array(select checkpoint_id from ai.checkpoint_lineage('t-tree', 'r6') order by depth),
          array['r6', 'r5', 'c000002', 'c000001'], 'the replay branch back to the root, skipping c3 and c4');
select is(array(select depth from ai.checkpoint_lineage('t-tree', 'r6') order by depth), array[0, 1, 2, 3], 'with depths');
select is(array(select checkpoint_id from ai.checkpoint_lineage('t-tree', 'c000004') order by depth),
          array['c000004', 'c000003', 'c000002', 'c000001'], 'the original branch is intact');

select * from finish();
rollback;

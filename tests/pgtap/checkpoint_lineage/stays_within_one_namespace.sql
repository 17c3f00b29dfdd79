\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(2);
set local role tenant_a;
-- the same ids in the root and in a subgraph namespace, with different parents
select pg_temp.chain('t-ns', 3);
select pg_temp.put_ckpt('t-ns', 'c000001', null, 'child:1');
select pg_temp.put_ckpt('t-ns', 'c000003', 'c000001', 'child:1');

select is(array(select checkpoint_id from ai.checkpoint_lineage('t-ns', 'c000003', 'child:1') order by depth),
          array['c000003', 'c000001'], 'the subgraph''s own chain');
select is(array(select checkpoint_id from ai.checkpoint_lineage('t-ns', 'c000003') order by depth),
          array['c000003', 'c000002', 'c000001'], 'the root''s chain');

select * from finish();
rollback;

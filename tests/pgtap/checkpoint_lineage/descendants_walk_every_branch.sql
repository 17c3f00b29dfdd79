\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(2);
set local role tenant_a;
select pg_temp.chain('t-down', 4);
select pg_temp.put_ckpt('t-down', 'r5', 'c000002');
select pg_temp.put_ckpt('t-down', 'r6', 'r5');

select set_eq($$select checkpoint_id, depth from ai.checkpoint_lineage('t-down', 'c000002', direction => 'descendants')$$,
              $$values ('c000002', 0), ('c000003', 1), ('r5', 1), ('c000004', 2), ('r6', 2)$$,
              'both branches below c2, by distance');
select is(array(select checkpoint_id from ai.checkpoint_lineage('t-down', 'c000004', direction => 'descendants')), array['c000004'],
          'a leaf has only itself');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(2);
set local role tenant_a;
select pg_temp.chain('t-tree', 5);

select results_eq($$select checkpoint_id from ai.checkpoint_tree('t-tree', max_rows => 2)$$,
                  $$values ('c000004'), ('c000005')$$, 'the newest two, oldest first');
select results_eq($$select checkpoint_id from ai.checkpoint_tree('t-tree', max_rows => 10, before_checkpoint_id => 'c000004')$$,
                  $$values ('c000001'), ('c000002'), ('c000003')$$, 'the page before the first row');

select * from finish();
rollback;

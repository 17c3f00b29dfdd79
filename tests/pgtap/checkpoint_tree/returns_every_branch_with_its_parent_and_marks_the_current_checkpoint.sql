\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(3);
set local role tenant_a;
select ai.create_session('t-tree') is not null as created \gset
select pg_temp.chain('t-tree', 3);
select pg_temp.put_ckpt('t-tree', 'c000004', 'c000002');   -- a branch from c2, the newest
select pg_temp.put_ckpt('t-tree', 'n1', null, 'sub');      -- another namespace

select results_eq($$select checkpoint_id, parent_checkpoint_id, is_current from ai.checkpoint_tree('t-tree')$$,
                  $$values ('c000001'::text, null::text, false), ('c000002', 'c000001', false), ('c000003', 'c000002', false),
                           ('c000004', 'c000002', true)$$,
                  'every checkpoint of the root namespace, oldest first, the current one marked');
select results_eq($$select checkpoint_id from ai.checkpoint_tree('t-tree', 'sub')$$, $$values ('n1'::text)$$, 'one namespace at a time');
select results_eq($$select checkpoint_id, parent_checkpoint_id from ai.checkpoint_tree('t-tree', max_rows => 2)$$,
                  $$values ('c000003'::text, 'c000002'::text), ('c000004', 'c000002')$$,
                  'the newest max_rows (a parent left out is still named)');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(3);
set local role tenant_a;
select pg_temp.chain('t-get', 3);
select pg_temp.put_ckpt('t-get', 'z9', null, 'child:1');

select is((select checkpoint_id from ai.get_checkpoint('t-get')), 'c000003', 'newest of the root namespace');
select is((select checkpoint_id from ai.get_checkpoint('t-get', 'child:1')), 'z9', 'newest of a child namespace');
select is((select parent_checkpoint_id from ai.get_checkpoint('t-get', '', 'c000002')), 'c000001', 'a given id, with its parent');

select * from finish();
rollback;

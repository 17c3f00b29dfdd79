\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(1);
set local role tenant_a;
-- ids brought by a caller in no time order: b (newest id) is the parent of a2, a parent of b
select pg_temp.put_ckpt('t-odd', 'a', null);
select pg_temp.put_ckpt('t-odd', 'b', 'a');
select pg_temp.put_ckpt('t-odd', 'a2', 'b');

select is(array(select checkpoint_id from ai.checkpoint_lineage('t-odd', 'a2') order by depth), array['a2', 'b', 'a'],
          'the walk finishes by primary key');

select * from finish();
rollback;

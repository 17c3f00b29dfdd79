\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(4);
set local role tenant_a;
select pg_temp.put_ckpt('t-lin', 'c1', null);

select throws_ok($$select * from ai.checkpoint_lineage('t-lin', 'nope')$$, 'AS001', null, 'unknown checkpoint');
select throws_ok($$select * from ai.checkpoint_lineage('t-lin', 'c1', direction => 'sideways')$$, 'AS002', null, 'unknown direction');
select throws_ok($$select * from ai.checkpoint_lineage('t-lin', null)$$, 'AS002', null, 'NULL checkpoint_id');
set local role tenant_b;
select throws_ok($$select * from ai.checkpoint_lineage('t-lin', 'c1')$$, 'AS001', null, 'another tenant''s checkpoint');

select * from finish();
rollback;

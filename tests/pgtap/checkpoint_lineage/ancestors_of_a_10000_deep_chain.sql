\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(3);
set local role tenant_a;
select pg_temp.chain('t-deep', 10000);
-- another thread's rows in between must not matter
select pg_temp.chain('t-other', 500);

select is((select count(*)::int from ai.checkpoint_lineage('t-deep', 'c010000', max_rows => 10000)), 10000, 'all 10,000 ancestors');
select is((select max(depth) from ai.checkpoint_lineage('t-deep', 'c010000', max_rows => 10000)), 9999, 'the root at depth 9,999');
select is((select checkpoint_id from ai.checkpoint_lineage('t-deep', 'c010000', max_rows => 10000) where depth = 9999), 'c000001', 'which is c1');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(3);
set local role tenant_a;
select pg_temp.chain('t-lin', 5);

select results_eq($$select checkpoint_id from ai.checkpoint_lineage('t-lin', 'c000005', max_rows => 2)$$,
                  $$values ('c000005'), ('c000004')$$, 'the first two ancestors');
select results_eq($$select checkpoint_id from ai.checkpoint_lineage('t-lin', 'c000003', max_rows => 10)$$,
                  $$values ('c000003'), ('c000002'), ('c000001')$$, 'the next page starts at the last row''s parent');
select is((select count(*)::int from ai.checkpoint_lineage('t-lin', 'c000001', direction => 'descendants', max_rows => 3)), 3,
          'descendants: at most max_rows, nearest first');

select * from finish();
rollback;

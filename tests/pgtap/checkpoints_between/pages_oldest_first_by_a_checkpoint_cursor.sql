\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(3);
set local role tenant_a;
select set_config('ai.frozen_now', '2030-01-01 00:00:00+00', true);
select pg_temp.chain('t-between', 5);  -- one instant: the cursor breaks the tie by namespace and id

select results_eq($$select checkpoint_id from ai.checkpoints_between('t-between', '2029-01-01', '2031-01-01', 2)$$,
                  $$values ('c000001'), ('c000002')$$, 'the first page');
select results_eq($$select checkpoint_id from ai.checkpoints_between('t-between', '2029-01-01', '2031-01-01', 10, '', 'c000002')$$,
                  $$values ('c000003'), ('c000004'), ('c000005')$$, 'the next page after the cursor');
select throws_ok($$select * from ai.checkpoints_between('t-between', '2029-01-01', '2031-01-01', 10, '', 'no-such')$$,
                 'AS001', null, 'an unknown cursor checkpoint');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(7);
set local role tenant_a;
-- five idle threads, created a second apart so the walk's order (newest first) is known
select set_config('ai.frozen_now', '2026-01-01 00:00:0' || i || '+00', true), pg_temp.chain('t-idle-' || i, 2)
from generate_series(1, 5) i;
select set_config('ai.frozen_now', '2026-02-01 00:00:00+00', true);

-- a batch of two looks at two sessions (however many it prunes) and says where to go on
select results_eq($$select pruned, next_thread_id from ai.prune_idle_threads('7 days', max_threads => 2)$$,
                  $$values (2, 't-idle-4')$$, 'the first batch: the two newest sessions, then a cursor');
select results_eq($$select pruned, next_thread_id from ai.prune_idle_threads('7 days', max_threads => 2, after_thread_id => 't-idle-4')$$,
                  $$values (2, 't-idle-2')$$, 'the second batch starts after the cursor');
select results_eq($$select pruned, next_thread_id from ai.prune_idle_threads('7 days', max_threads => 2, after_thread_id => 't-idle-2')$$,
                  $$values (1, null::text)$$, 'the last batch is short: no cursor, the walk is done');
-- pruned threads stay idle: a second walk finds them again and prunes nothing more (keep_latest)
select results_eq($$select pruned, next_thread_id from ai.prune_idle_threads('7 days', max_threads => 10)$$,
                  $$values (5, null::text)$$, 'a walk of pruned threads visits them again, bounded by the batch');
select throws_ok($$select * from ai.prune_idle_threads('7 days', max_threads => 0)$$, 'AS002', null, 'max_threads below 1');
select throws_ok($$select * from ai.prune_idle_threads('7 days', after_thread_id => 'no-such-thread')$$, 'AS001', null,
                 'an unknown cursor');
reset role;
select is((select count(*)::int from ai.checkpoints where thread_id like 't-idle-%'), 5, 'keep_latest left one checkpoint per thread');

select * from finish();
rollback;

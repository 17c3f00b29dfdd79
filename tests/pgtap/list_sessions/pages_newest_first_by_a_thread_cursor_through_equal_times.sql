\ir ../fixtures/helpers.sql
begin;
select plan(3);
set local role tenant_a;
-- five sessions made at one frozen instant: the cursor's thread_id breaks the tie
select set_config('ai.frozen_now', '2030-01-01 00:00:00+00', true);
select ai.create_session('ls-' || i) from generate_series(1, 5) i;

select results_eq($$select thread_id from ai.list_sessions(max_rows => 2) where thread_id like 'ls-%'$$,
                  $$values ('ls-5'), ('ls-4')$$, 'the first page');
select results_eq($$select thread_id from ai.list_sessions(max_rows => 10, before_thread_id => 'ls-4') where thread_id like 'ls-%'$$,
                  $$values ('ls-3'), ('ls-2'), ('ls-1')$$, 'the next page starts after the cursor, at the same time');
select throws_ok($$select * from ai.list_sessions(before_thread_id => 'no-such-thread')$$, 'AS001', null, 'an unknown cursor');

select * from finish();
rollback;

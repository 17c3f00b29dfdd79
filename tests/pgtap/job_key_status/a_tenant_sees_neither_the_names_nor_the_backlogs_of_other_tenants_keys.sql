\ir ../fixtures/helpers.sql
begin;
select plan(7);
\ir ../fixtures/queue.sql

set local role app_service;
select ai.set_job_key('default', 'openai', max_in_flight => 5, rate_per_minute => 60) is not null as set \gset
select ai.set_job_key('default', 'secret-b', weight => 2) is not null as set \gset
set local role tenant_a;
select ai.enqueue_job('qa1', key => 'openai') is not null as queued \gset
select ai.enqueue_job('qa2') is not null as queued \gset
set local role tenant_b;
select ai.enqueue_job('qb1', key => 'secret-b') is not null as queued \gset
select count(ai.create_session('qb' || n)) as made from generate_series(10, 12) n \gset
select count(ai.enqueue_job('qb' || n, key => 'openai')) as queued from generate_series(10, 12) n \gset

set local role tenant_a;
select results_eq($$select key, backlog, max_in_flight, tokens from ai.job_key_status()$$,
  $$values ('@tenant_a', 1::bigint, null::integer, null::double precision), ('openai', 1, 5, null)$$,
  'tenant_a: its own key and the shared key it uses, counted over its own jobs, no tokens');
select is_empty($$select * from ai.job_key_status(after_queue => 'default', after_key => '@tenant_a') where key like '%b%'$$,
  'a cursor does not reach another tenant''s keys');
select is_empty($$select * from ai.job_key_status('default') where key in ('secret-b', '@tenant_b')$$, 'nor does naming the queue');
select throws_ok($$select * from ai.job_keys$$, '42501', null, 'the table itself: no privilege');
select throws_ok($$explain select * from ai.job_keys$$, '42501', null, 'nor through EXPLAIN');
select throws_ok($$select ai.enqueue_job('qa1', key => '@tenant_b')$$, 'AS002', null, 'nor by naming its own key');
set local role app_service;
select results_eq($$select key, backlog from ai.job_key_status('default')$$,
  $$values ('@tenant_a', 1::bigint), ('openai', 4), ('secret-b', 1)$$,
  'an operator sees every key and whole backlogs');

select * from finish();
rollback;

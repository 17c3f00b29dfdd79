\ir ../fixtures/helpers.sql
begin;
select plan(6);
\ir ../fixtures/queue.sql

-- 60 a minute (one a second), at most 2 at once
set local role app_service;
select ai.set_job_key('default', 'openai', rate_per_minute => 60, burst => 2) is not null as set \gset
set local role tenant_a;
select count(ai.create_session('qa' || n)) as made from generate_series(10, 29) n \gset
select count(ai.enqueue_job('qa' || n, key => 'openai')) as queued from generate_series(10, 29) n \gset
set local role app_service;
select is((select count(*)::int from ai.claim_jobs('w', '1 minute', 'default', 10)), 2, 'a full bucket: the burst');
select is((select count(*)::int from ai.claim_jobs('w', '1 minute', 'default', 10)), 0, 'then none at the same instant');
select set_config('ai.frozen_now', '2030-01-01 00:00:01+00', true) is not null as moved \gset
select is((select count(*)::int from ai.claim_jobs('w', '1 minute', 'default', 10)), 1, 'one a second');
select set_config('ai.frozen_now', '2030-01-01 00:00:01.5+00', true) is not null as moved \gset
select is((select count(*)::int from ai.claim_jobs('w', '1 minute', 'default', 10)), 0, 'not before the next token');
select set_config('ai.frozen_now', '2030-01-01 00:01:00+00', true) is not null as moved \gset
select is((select count(*)::int from ai.claim_jobs('w', '1 minute', 'default', 10)), 2, 'after a long wait, no more than the burst');
select results_eq($$select tokens < 1 from ai.job_key_status('default') where key = 'openai'$$, array[true], 'the bucket the operator reads is spent');

select * from finish();
rollback;

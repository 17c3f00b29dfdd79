\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role tenant_a;
select ai.create_session(t) from unnest(array['rs-done', 'rs-run', 'rs-none', 'rs-queued', 'rs-wait']) t;
select (ai.enqueue_job('rs-done', '{}', 'rs-q')).job_id as done \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute', 'rs-q')).fencing_token as token \gset
select ai.complete_job(:done, :token) is not null as completed \gset
set local role tenant_a;
select (ai.enqueue_job('rs-run', '{}', 'rs-q')).job_id as running \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute', 'rs-q')).fencing_token as token2 \gset
set local role tenant_a;
select (ai.enqueue_job('rs-queued', '{}', 'rs-q')).job_id as queued \gset

select results_eq(
  $$select thread_id, run_status, jobs from ai.thread_run_status(array['rs-done', 'rs-run', 'rs-none', 'rs-queued', 'rs-nobody'])$$,
  $$values ('rs-done'::text, 'completed'::text, 1::bigint), ('rs-queued', 'queued', 1), ('rs-run', 'running', 1)$$,
  'completed, running, queued; a thread without jobs (or unknown) has no row');
select is((select status from ai.get_session('rs-done')), 'active', 'the session itself still reads active');

set local role tenant_b;
select is_empty($$select * from ai.thread_run_status(array['rs-done', 'rs-run'])$$, 'another tenant''s threads have no row');

select * from finish();
rollback;

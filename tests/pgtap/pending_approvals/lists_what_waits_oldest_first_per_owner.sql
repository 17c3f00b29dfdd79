\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/queue.sql

set local role tenant_b;
select (ai.enqueue_job('qb1')).job_id as jb \gset
set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as ja1 \gset
select (ai.enqueue_job('qa2')).job_id as ja2 \gset
set local role app_service;
select ai.request_human(job_id, fencing_token, 'c-' || thread_id) from ai.claim_job('w1', '1 minute');
select set_config('ai.frozen_now', '2030-01-01 00:00:05+00', true) is not null as moved \gset
select ai.request_human(job_id, fencing_token, 'c-' || thread_id) from ai.claim_job('w1', '1 minute');
select set_config('ai.frozen_now', '2030-01-01 00:00:09+00', true) is not null as moved \gset
select ai.request_human(job_id, fencing_token, 'c-' || thread_id) from ai.claim_job('w1', '1 minute');

select results_eq($$select thread_id from ai.pending_approvals() where thread_id like 'q%'$$, $$values ('qb1'), ('qa1'), ('qa2')$$, 'a service sees every owner''s, oldest first');
select results_eq($$select thread_id from ai.pending_approvals('tenant_a') where thread_id like 'q%'$$, $$values ('qa1'), ('qa2')$$, 'or one owner''s');
select results_eq($$select thread_id from ai.pending_approvals('tenant_b', max_rows => 1) where thread_id like 'q%'$$, $$values ('qb1')$$, 'at most max_rows');
set local role tenant_a;
select results_eq($$select thread_id from ai.pending_approvals() where thread_id like 'q%'$$, $$values ('qa1'), ('qa2')$$, 'a tenant sees its own');
select throws_ok($$select ai.pending_approvals(max_rows => 0)$$, 'AS002', 'max_rows must be between 1 and 10000, not 0', 'bad max_rows');
select * from finish();
rollback;

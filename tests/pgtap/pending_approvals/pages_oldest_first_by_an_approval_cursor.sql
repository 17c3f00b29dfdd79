\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role tenant_a;
select ai.create_session('pa' || i), ai.enqueue_job('pa' || i) from generate_series(1, 3) i;
set local role app_service;
select set_config('ai.frozen_now', '2030-01-01 00:00:01+00', true) is not null as moved \gset
select ai.request_human(job_id, fencing_token, 'c') from ai.claim_job('w1', '1 minute');
select set_config('ai.frozen_now', '2030-01-01 00:00:02+00', true) is not null as moved \gset
select ai.request_human(job_id, fencing_token, 'c') from ai.claim_job('w1', '1 minute');
select set_config('ai.frozen_now', '2030-01-01 00:00:03+00', true) is not null as moved \gset
select ai.request_human(job_id, fencing_token, 'c') from ai.claim_job('w1', '1 minute');
set local role tenant_a;
select approval_id as first from ai.pending_approvals(max_rows => 1) \gset
select results_eq($$select thread_id from ai.pending_approvals(max_rows => 1)$$, $$values ('pa1')$$, 'the first page');
select results_eq(format($$select thread_id from ai.pending_approvals(max_rows => 5, after_approval_id => %L)$$, :'first'),
                  $$values ('pa2'), ('pa3')$$, 'the next page starts after the cursor');
select throws_ok($$select * from ai.pending_approvals(after_approval_id => 'no-such-approval')$$, 'AS001', null, 'an unknown cursor');

select * from finish();
rollback;

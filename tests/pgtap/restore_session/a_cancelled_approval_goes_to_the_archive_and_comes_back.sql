\ir ../fixtures/helpers.sql
begin;
select plan(3);

-- The archive twin of ai.human_approvals accepts the status 'cancelled' too.
set local ai.frozen_now = '2030-01-01 00:00:00+00';
set local role tenant_a;
select ai.create_session('hitl-cancelled') is not null as created \gset
select (ai.enqueue_job('hitl-cancelled', '{}', 'hitl-cancel-archive')).job_id as job \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute', 'hitl-cancel-archive')).fencing_token as token \gset
select ai.request_human(:job, :token, 'c1') as approval \gset
set local role tenant_a;
select ai.cancel_job(:job) is not null as cancelled \gset
select ai.set_session_status('hitl-cancelled', 'completed') is not null as completed \gset
reset role;
select row(h.*)::text as before from ai.human_approvals h where approval_id = :'approval' \gset

set local ai.frozen_now = '2030-04-11 00:00:00+00';
set local role app_service;
select count(*) from ai.archive_sessions('90 days');
reset role;
select is((select status from ai_archive.human_approvals where approval_id = :'approval'), 'cancelled', 'the cancelled approval moved to the archive');
set local role app_service;
select (ai.restore_session('hitl-cancelled')).status;
reset role;
select is((select row(h.*)::text from ai.human_approvals h where approval_id = :'approval'), :'before', 'and comes back unchanged');
select is((select status from ai.human_approvals where approval_id = :'approval'), 'cancelled', 'still cancelled');
select * from finish();
rollback;

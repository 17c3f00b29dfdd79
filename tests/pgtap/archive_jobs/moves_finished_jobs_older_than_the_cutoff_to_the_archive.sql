\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as old \gset
select (ai.enqueue_job('qa2')).job_id as pending \gset
set local role app_service;
select (ai.claim_job('w')).fencing_token as t \gset
select ai.complete_job(:old, :t, '{"ok": true}') is not null as c \gset
select set_config('ai.frozen_now', '2030-01-02 00:00:00+00', true) is not null as moved \gset
select is(ai.archive_jobs('2 days'), 0, 'nothing finished two days ago');
select is(ai.archive_jobs('1 day'), 1, 'one job finished a day ago');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.agent_jobs where job_id = :old), 0, 'gone from agent_jobs');
select is((select (status, result, archived_at) from ai.agent_jobs_archive where job_id = :old),
          ('COMPLETED'::text, '{"ok": true}'::jsonb, '2030-01-02 00:00:00+00'::timestamptz), 'kept whole in the archive');
select is((select status from ai.agent_jobs where job_id = :pending), 'PENDING', 'unfinished jobs stay');
set local role app_service;

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1', headers => '{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}')).job_id as old \gset
set local role app_service;
select (ai.claim_job('w')).fencing_token as t \gset
select ai.complete_job(:old, :t, '{"ok": true}') is not null as c \gset
select set_config('ai.frozen_now', '2030-01-02 00:00:00+00', true) is not null as moved \gset
select is(ai.archive_jobs('1 day'), 1, 'one job finished a day ago');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select (status, headers ->> 'traceparent', archived_at) from ai.agent_jobs_archive where job_id = :old),
          ('COMPLETED'::text, '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'::text,
           '2030-01-02 00:00:00+00'::timestamptz), 'archived with its headers, each column in its place');
set local role app_service;

select * from finish();
rollback;

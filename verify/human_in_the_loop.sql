-- Verify agent-state:human_in_the_loop on pg
select approval_id, thread_id, owner, job_id, checkpoint_id, action, status, requested_by, requested_at, decision,
       decided_by, decided_for, decided_at
from ai.human_approvals where false;
select approval_id from ai_archive.human_approvals where false;
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.human_approvals'::regclass);
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai_archive.human_approvals'::regclass);
select 1 / (select count(*)::int from ai._archived_tables where table_name = 'human_approvals');
select 1 / (select (count(*) = 3)::int from ai.error_codes where sqlstate in ('AS032', 'AS033', 'AS034'));
select 'ai.human_approvals_one_pending_per_thread'::regclass;
select 'ai._check_approval_row(text, text, jsonb, timestamptz)'::regprocedure;
select 1 / count(*) from pg_catalog.pg_constraint where conname = 'human_approvals_row_check' and conrelid = 'ai.human_approvals'::regclass;

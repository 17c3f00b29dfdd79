-- Verify agent-state:cancel_awaiting_human on pg
-- A trigger on ai.agent_jobs closes the approval of a cancelled job: this change's own
-- (agent_jobs_close_approval_on_cancel), or, once queue_lean_writes folded the job triggers into
-- one, agent_jobs_status_moved. (A verify script checks the final state, so it names both.)
select 1 / (select count(*)::int from pg_catalog.pg_trigger
            where tgrelid = 'ai.agent_jobs'::regclass
              and tgname in ('agent_jobs_close_approval_on_cancel', 'agent_jobs_status_moved')
              and pg_catalog.pg_get_functiondef(tgfoid) like '%ai._close_approval_of_job(%');
select 'ai._close_approval_of_job(bigint, text)'::regprocedure;
select 1 / (select count(*)::int from pg_catalog.pg_constraint
            where conrelid = 'ai.human_approvals'::regclass and conname = 'human_approvals_status_check'
              and pg_catalog.pg_get_constraintdef(oid) like '%cancelled%');
select 1 / (select count(*)::int from pg_catalog.pg_constraint
            where conrelid = 'ai_archive.human_approvals'::regclass and conname = 'human_approvals_status_check'
              and pg_catalog.pg_get_constraintdef(oid) like '%cancelled%');
select 1 / (select (prosrc like '%was cancelled with job%')::int from pg_catalog.pg_proc
            where oid = 'ai.resolve_human(text, text, jsonb)'::regprocedure);
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.agent_sessions'::regclass);

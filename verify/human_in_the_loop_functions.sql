-- Verify agent-state:human_in_the_loop_functions on pg

begin;

select 'ai.request_human(bigint, bigint, text, jsonb)'::regprocedure;
select 'ai._close_approval_of_job(bigint, text)'::regprocedure;
select 'ai.resolve_human(text, text, jsonb)'::regprocedure;
select 'ai._human_payload(text, text, jsonb, jsonb, text, timestamptz)'::regprocedure;
select 'ai.pending_approvals(text, integer, text)'::regprocedure;
select 'ai.get_approval(text)'::regprocedure;
select 'ai.decided_approvals(text, text, integer, timestamptz, text)'::regprocedure;

rollback;

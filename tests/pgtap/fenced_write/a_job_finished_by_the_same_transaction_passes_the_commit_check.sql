\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

-- The holder finishes its job inside its fenced transaction (ctx.complete(result, conn)): the job
-- is no longer IN_PROGRESS at commit, but this transaction moved it and holds its row.
select ai.fenced_write(:id, :token) is not null as fenced \gset
select (ai.complete_job(:id, :token, '{"ok": true}')).status as status \gset
select set_config('ai.frozen_now', '2030-01-01 00:05:00+00', true) is not null as moved \gset
select lives_ok('set constraints ai.job_fences_checked_at_commit immediate', 'its own complete_job passes the check');
set constraints ai.job_fences_checked_at_commit deferred;

-- the same inside a subtransaction (a savepoint) of the fenced transaction
set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as id2 \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute')).fencing_token as token2 \gset
select ai.fenced_write(:id2, :token2) is not null as fenced \gset
savepoint finish;
select (ai.fail_job(:id2, :token2, 'boom')).status as status2 \gset
release savepoint finish;
select lives_ok('set constraints ai.job_fences_checked_at_commit immediate', 'a fail_job in a released savepoint passes too');
set constraints ai.job_fences_checked_at_commit deferred;

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(8);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

-- The fenced append's path (issue 34 item 8): ai._fence reads the held job and its thread in one
-- probe and queues the check at commit itself, once per transaction and (job, token), sharing
-- ai.fenced_write's mark. Every guarantee of the fence holds at that path.
reset role;
select pg_catalog.pg_stat_get_xact_tuples_inserted('ai.job_fences'::regclass) as ins0 \gset
set local role app_service;
select is((ai.append_message_idempotent('qa1', 'assistant', '"one"', job_id => :id, fencing_token => :token)).seq,
          1::bigint, 'the holder appends');
select is((ai.append_message_idempotent('qa1', 'assistant', '"two"', job_id => :id, fencing_token => :token)).seq,
          2::bigint, 'and again');
reset role;
select is(pg_catalog.pg_stat_get_xact_tuples_inserted('ai.job_fences'::regclass) - :ins0, 1::bigint,
          'two fenced appends in one transaction: one check queued at commit');
set local role app_service;
select ai.fenced_write(:id, :token) is not null as fenced \gset
reset role;
select is(pg_catalog.pg_stat_get_xact_tuples_inserted('ai.job_fences'::regclass) - :ins0, 1::bigint,
          'and a fenced_write after them queues none (the same mark)');
set local role app_service;
select is((ai.append_message_idempotent('qa1', 'assistant', '"one"', job_id => :id, fencing_token => :token)).inserted,
          false, 'a retry under the fence returns the original');
select throws_ok(format($$select ai.append_message_idempotent('qa1', 'assistant', '"zombie"', job_id => %s, fencing_token => %s)$$, :id, :token - 1),
                 'AS006', null, 'an old token is refused at once');
select throws_ok(format($$select ai.append_message_idempotent('qa2', 'assistant', '"elsewhere"', job_id => %s, fencing_token => %s)$$, :id, :token),
                 'AS002', format('job %s does not advance thread qa2', :id), 'the job''s token writes to its own thread only');

-- The lease ends after the appends passed: the transaction cannot commit (the check queued by the
-- append's probe, fired here with SET CONSTRAINTS ... IMMEDIATE).
select set_config('ai.frozen_now', '2030-01-01 00:01:00+00', true) is not null as moved \gset
select throws_ok('set constraints ai.job_fences_checked_at_commit immediate', 'AS006',
                 format('job %s: lease lost before the fenced transaction committed', :id),
                 'a fenced append cannot commit after its lease ended');

select * from finish();
rollback;

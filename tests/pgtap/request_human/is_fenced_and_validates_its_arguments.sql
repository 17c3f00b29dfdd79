\ir ../fixtures/helpers.sql
begin;
select plan(10);
\ir ../fixtures/side_effects.sql

select throws_ok(format($$select ai.request_human(%s, %s, null)$$, :job, :token), 'AS002', 'checkpoint_id must not be NULL', 'NULL checkpoint');
select throws_ok($$select ai.request_human(null, null, 'c1')$$, 'AS002', 'job_id and fencing_token must not be NULL', 'no job');
-- one without the other: the guard of every write made for a job (ai._fence), its messages
select throws_ok(format($$select ai.request_human(%s, null, 'c1')$$, :job), 'AS002', 'fencing_token must not be NULL when job_id is given', 'NULL token');
select throws_ok(format($$select ai.request_human(null, %s, 'c1')$$, :token), 'AS002', 'job_id must not be NULL when fencing_token is given', 'NULL job');
select throws_ok(format($$select ai.request_human(%s, %s, 'c1', null)$$, :job, :token), 'AS002', 'action must not be NULL', 'NULL action');
select throws_ok(format($$select ai.request_human(%s, %s, 'c1')$$, :job, :token + 1), 'AS006', format('job %s: lease lost', :job), 'a stale token');
select throws_ok($$select ai.request_human(-1, 1, 'c1')$$, 'AS001', 'job -1 not found', 'an unknown job');
-- the checkpoint must be the newest of the thread when it has checkpoints
select ai.put_checkpoint('qa1', '', '01J00000000000000000000002', null, 'test', '\x01', '{}', '{}') is not null as put \gset
select throws_ok(format($$select ai.request_human(%s, %s, 'c1')$$, :job, :token), 'AS034',
                 'checkpoint c1 is not the newest of thread qa1 (01J00000000000000000000002)', 'a stale checkpoint');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select status from ai.agent_jobs where job_id = :job), 'IN_PROGRESS', 'a refused pause changes nothing');
set local role app_service;
set local role tenant_a;
select throws_ok(format($$select ai.request_human(%s, %s, 'c1')$$, :job, :token), '42501', null, 'tenants cannot pause jobs');
select * from finish();
rollback;

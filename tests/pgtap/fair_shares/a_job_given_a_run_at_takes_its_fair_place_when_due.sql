\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role tenant_a;
select count(ai.create_session('qa' || n)) as made from generate_series(10, 109) n \gset
select count(*) as queued from ai.enqueue_jobs(array(select 'qa' || n from generate_series(10, 109) n),
                                              array(select '{}'::jsonb from generate_series(10, 109) n),
                                              run_ats => array(select timestamptz '2030-01-01 00:00:10' from generate_series(10, 109) n)) \gset
set local role tenant_b;
select (ai.enqueue_job('qb1', run_at => '2030-01-01 00:00:20')).job_id as b_job \gset
set local role app_service;
select is_empty($$select * from ai.claim_jobs('w', '1 minute', 'default', 10)$$, 'nothing is due yet');
select set_config('ai.frozen_now', '2030-01-01 00:00:30+00', true) is not null as moved \gset
-- the first claim gives the hundred due first (tenant_a's) their place, the second tenant_b's:
-- its job lands right behind the head of the fair order (one vtime step), not behind tenant_a's hundred
create temp table taken (n serial, job_id bigint);
grant all on taken, taken_n_seq to app_service;
insert into taken (job_id) select job_id from ai.claim_jobs('w', '1 minute', 'default', 1);
insert into taken (job_id) select job_id from ai.claim_jobs('w', '1 minute', 'default', 1);
insert into taken (job_id) select job_id from ai.claim_jobs('w', '1 minute', 'default', 1);
insert into taken (job_id) select job_id from ai.claim_jobs('w', '1 minute', 'default', 1);
select ok(:b_job in (select job_id from taken), 'tenant_b''s job, due after tenant_a''s hundred, is among the first four claims once due');
reset role;
select is((select count(*)::int from ai.agent_jobs where vtime is null and status = 'PENDING'), 0, 'every due job has its place in the fair order');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

-- tenant_a: 300 due jobs, one per thread; claims take a few of them
set local role tenant_a;
select count(ai.create_session('qa' || n)) as made from generate_series(10, 309) n \gset
select count(*) as queued from ai.enqueue_jobs(array(select 'qa' || n from generate_series(10, 309) n),
                                              array(select '{}'::jsonb from generate_series(10, 309) n)) \gset
set local role app_service;
select count(*) as first from ai.claim_jobs('w', '1 minute', 'default', 5) \gset
-- tenant_b's new job comes after at most one more of tenant_a's, not after the 295 left
set local role tenant_b;
select (ai.enqueue_job('qb1', '{"b": true}')).job_id as b_job \gset
set local role app_service;
create temp table taken (n serial, job_id bigint, owner text);
grant all on taken, taken_n_seq to app_service;
insert into taken (job_id, owner) select job_id, owner from ai.claim_jobs('w', '1 minute', 'default', 1);
insert into taken (job_id, owner) select job_id, owner from ai.claim_jobs('w', '1 minute', 'default', 1);
select ok((select n from taken where job_id = :b_job) <= 2, 'tenant_b''s job is among the next two claims');
reset role;
select is((select count(*)::int from ai.agent_jobs where owner = 'tenant_a' and status = 'PENDING'), 295 - (select count(*)::int from taken where owner = 'tenant_a'),
          'tenant_a''s backlog is still there');

select * from finish();
rollback;

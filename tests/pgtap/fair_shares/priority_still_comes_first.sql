\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

set local role tenant_a;
select count(ai.create_session('qa' || n)) as made from generate_series(10, 59) n \gset
select count(*) as queued from ai.enqueue_jobs(array(select 'qa' || n from generate_series(10, 59) n),
                                              array(select '{}'::jsonb from generate_series(10, 59) n)) \gset
set local role tenant_b;
select (ai.enqueue_job('qb1')).job_id as b_low \gset
set local role tenant_a;
select (ai.enqueue_job('qa1', priority => 5)).job_id as a_high \gset
set local role app_service;
select is((select job_id from ai.claim_jobs('w', '1 minute', 'default', 1)), :a_high::bigint,
          'the higher priority first, whatever the key''s backlog');
select is((select job_id from ai.claim_jobs('w', '1 minute', 'default', 2) where owner = 'tenant_b'), :b_low::bigint,
          'then the fair order at priority 0: tenant_b''s job among the next two');

select * from finish();
rollback;

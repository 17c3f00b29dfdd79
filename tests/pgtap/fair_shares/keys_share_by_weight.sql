\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

set local role app_service;
select ai.set_job_key('default', '@tenant_a', weight => 3) is not null as set \gset
set local role tenant_a;
select count(ai.create_session('qa' || n)) as made from generate_series(10, 109) n \gset
select count(*) as queued from ai.enqueue_jobs(array(select 'qa' || n from generate_series(10, 109) n),
                                              array(select '{}'::jsonb from generate_series(10, 109) n)) \gset
set local role tenant_b;
select count(ai.create_session('qb' || n)) as made from generate_series(10, 109) n \gset
select count(*) as queued from ai.enqueue_jobs(array(select 'qb' || n from generate_series(10, 109) n),
                                              array(select '{}'::jsonb from generate_series(10, 109) n)) \gset
set local role app_service;
create temp table taken as select owner from ai.claim_jobs('w', '1 minute', 'default', 40);
select cmp_ok((select count(*)::int from taken where owner = 'tenant_a'), '>=', 29, 'weight 3: about three claims in four');
select cmp_ok((select count(*)::int from taken where owner = 'tenant_b'), '>=', 9, 'weight 1: about one in four');

select * from finish();
rollback;

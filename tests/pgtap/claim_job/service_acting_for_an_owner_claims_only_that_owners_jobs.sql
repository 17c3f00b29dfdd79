\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role tenant_a;
select ai.enqueue_job('qa1') is not null as a \gset
set local role tenant_b;
select (ai.enqueue_job('qb1')).job_id as b \gset
set local role app_service;
select ai.act_as('tenant_b') is not null as acting \gset
select is((select job_id from ai.claim_job('w')), :b::bigint, 'acting for tenant_b: tenant_b''s job');
select is((select count(*)::int from ai.claim_job('w')), 0, 'tenant_a''s job is out of sight');
select ai.act_as(null) is not null as stopped \gset
select is((select owner from ai.claim_job('w')), 'tenant_a', 'acting for nobody, the service claims across tenants');

select * from finish();
rollback;

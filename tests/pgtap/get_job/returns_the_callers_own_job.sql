\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1', '{"x": 1}')).job_id as id \gset
select is((ai.get_job(:id)).payload, '{"x": 1}'::jsonb, 'the owner reads its job');
set local role app_service;
select is((ai.get_job(:id)).owner, 'tenant_a', 'so does the service');
set local role tenant_b;
select throws_ok(format('select ai.get_job(%s)', :id), 'AS001', format('job %s not found', :id), 'another tenant does not');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql
set local role tenant_a;
select ai.enqueue_job('qa1');
set local role app_service;
select count(*) from ai.claim_jobs('w-a', '1 minute', 'default', 1, 'r1');
set local role tenant_b;
select throws_ok($$select * from ai.list_workers()$$, '42501', null,
                 'a tenant may not list workers (their holdings span tenants)');
select throws_ok($$select * from ai.queue_workers$$, '42501', null, 'nor read the registry');
set local role app_service;
select is((select thread_ids from ai.list_workers() where worker = 'w-a'), array['qa1'], 'the service lists them');

select * from finish();
rollback;

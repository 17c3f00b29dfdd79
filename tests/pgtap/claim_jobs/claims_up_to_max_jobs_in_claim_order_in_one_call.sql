\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

set local role tenant_a;
select count(ai.create_session('qa' || n)) as made from generate_series(3, 7) n \gset
select count(ai.enqueue_job('qa' || n, jsonb_build_object('n', n), priority => n)) as queued from generate_series(3, 7) n \gset
set local role app_service;
select results_eq($$select (payload->>'n')::int from ai.claim_jobs('w', '1 minute', 'default', 3)$$, array[7, 6, 5], 'the three highest priorities, in claim order');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.agent_jobs where status = 'IN_PROGRESS' and lease_owner = 'w' and fencing_token = 1 and attempts = 1), 3, 'each leased to w under token 1, one attempt');
set local role app_service;
select results_eq($$select (payload->>'n')::int from ai.claim_jobs('w', '1 minute', 'default', 10)$$, array[4, 3], 'then the rest, fewer than asked');
select is_empty($$select * from ai.claim_jobs('w', '1 minute', 'default', 10)$$, 'then none');

select * from finish();
rollback;

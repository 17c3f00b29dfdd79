\ir ../fixtures/helpers.sql
begin;
select plan(6);
\ir ../fixtures/side_effects.sql

select outcome from ai.begin_side_effect('qa1', 'k1', '{}', :job, :token);
select ai.request_human(:job, :token, 'c1', '{"send": "mail"}') is not null as asked \gset
set local role tenant_b;
select throws_ok($$select ai.get_side_effect('qa1', 'k1')$$, 'AS001', null, 'tenant_b sees none of tenant_a''s ledger rows');
select throws_ok($$insert into ai.side_effects (thread_id, idempotency_key, owner, status, created_at, updated_at)
                   values ('qa1', 'x', 'tenant_a', 'reserved', now(), now())$$, '42501', null, 'and cannot write one for tenant_a');
reset role;
select is((select count(*)::int from ai.side_effects where thread_id like 'q%') + (select count(*)::int from ai.human_approvals where thread_id like 'q%'), 2, 'tenant_a''s rows are all there');
select is((select status from ai.side_effects where thread_id like 'q%'), 'reserved', 'unchanged');
set local role tenant_b;
select throws_ok($$insert into ai.human_approvals (thread_id, owner, job_id, checkpoint_id, requested_at) values ('qa1', 'tenant_a', 1, 'c', now())$$,
                 '42501', null, 'tenants cannot insert approvals (only request_human, for workers)');
select is((select count(*)::int from ai.pending_approvals()), 0, 'nor list tenant_a''s');
select * from finish();
rollback;

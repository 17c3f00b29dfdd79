\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/side_effects.sql

select outcome from ai.begin_side_effect('qa1', 'k1', '{}', :job, :token);
select ai.request_human(:job, :token, 'c1', '{"send": "mail"}') is not null as asked \gset
set local role tenant_b;
select is((select count(*)::int from ai.side_effects where thread_id like 'q%') + (select count(*)::int from ai.human_approvals where thread_id like 'q%'), 0,
          'tenant_b sees none of tenant_a''s ledger rows or approvals');
select throws_ok($$insert into ai.side_effects (thread_id, idempotency_key, owner, status, created_at, updated_at)
                   values ('qa1', 'x', 'tenant_a', 'reserved', now(), now())$$, '42501', null, 'and cannot write one for tenant_a');
update ai.side_effects set status = 'done', result = '{}', finished_at = now() where thread_id = 'qa1';  -- matches no row it may see
set local role tenant_a;
select is((select count(*)::int from ai.side_effects where thread_id like 'q%') + (select count(*)::int from ai.human_approvals where thread_id like 'q%'), 2, 'tenant_a sees its own');
select is((select status from ai.side_effects where thread_id like 'q%'), 'reserved', 'tenant_b''s update changed nothing');
select throws_ok($$insert into ai.human_approvals (thread_id, owner, job_id, checkpoint_id, requested_at) values ('qa1', 'tenant_a', 1, 'c', now())$$,
                 '42501', null, 'tenants cannot insert approvals (only request_human, for workers)');
select * from finish();
rollback;

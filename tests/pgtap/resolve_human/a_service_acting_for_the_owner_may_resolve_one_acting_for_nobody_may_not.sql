\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/side_effects.sql

select ai.request_human(:job, :token, 'c1') is not null as asked \gset
select throws_ok($$select ai.resolve_human('qa1', 'c1', '{}')$$, 'AS007',
                 'a decision is made for an owner: a service must act for the session''s owner (ai.act_as)', 'a service acting for nobody');
select ai.act_as('tenant_b') is not null as acting \gset
select throws_ok($$select ai.resolve_human('qa1', 'c1', '{}')$$, 'AS001', 'thread qa1 not found', 'acting for another owner, the thread is not found');
select ai.act_as('tenant_a') is not null as acting \gset
select is((select (decided_by, decided_for)::text from ai.resolve_human('qa1', 'c1', '{"ok": 1}')), '(app_service,tenant_a)',
          'acting for the owner: decided by the service, for the owner');
select * from finish();
rollback;

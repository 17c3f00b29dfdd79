\ir ../fixtures/helpers.sql
begin;
select plan(2);

\ir ../fixtures/two_tenants.sql
set local role tenant_a;
select ai.record_usage('t-a', 'k', 'm', 1, 1, 1.00);
set local role tenant_b;
select ai.record_usage('t-b', 'k', 'm', 2, 2, 2.00);
set local role tenant_a;
select results_eq($$select owner, cost from ai.usage_summary('-infinity', 'infinity')$$,
                  $$values ('tenant_a'::text, 1.00::numeric)$$, 'a tenant sees its own');
set local role app_service;
select results_eq($$select owner, cost from ai.usage_summary('-infinity', 'infinity')$$,
                  $$values ('tenant_a'::text, 1.00::numeric), ('tenant_b', 2.00)$$, 'a service sees every tenant');

select * from finish();
rollback;

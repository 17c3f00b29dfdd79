\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/queue.sql

set local role tenant_a;
select throws_ok($$select ai.set_job_key('default', '@tenant_a', max_in_flight => 1000)$$, '42501', null,
                 'a tenant cannot raise its own limit (no privilege)');
set local role app_service;
select throws_ok($$select ai.act_as('tenant_a'); select ai.set_job_key('default', '@tenant_a', max_in_flight => 1000)$$, 'AS007', null,
                 'nor can a service acting for a tenant (AS007)');
select ok(not has_function_privilege('ai_user', 'ai.set_job_key(text, text, double precision, integer, double precision, integer)', 'execute'), 'ai_user holds no EXECUTE');
select is((ai.set_job_key('default', '@tenant_a', 2, 3, 60, 5)).max_in_flight, 3, 'an operator sets it');
select is((ai.set_job_key('default', '@tenant_a')), null::ai.job_keys, 'the defaults remove the row');

select * from finish();
rollback;

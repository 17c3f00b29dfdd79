\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/queue.sql

select ok(not has_function_privilege('ai_user', 'ai.set_queue_deadlines(text, interval, interval, interval)', 'execute'),
          'a tenant may not call it');
select ok(not has_function_privilege('public', 'ai.set_queue_deadlines(text, interval, interval, interval)', 'execute'), 'nor public');
set local role app_service;
select lives_ok($$select ai.set_queue_deadlines('default', '1 minute')$$, 'an operator sets a queue''s defaults');
select throws_ok($$select ai.set_queue_deadlines('default', '0 seconds')$$, 'AS002', null, 'a timeout that is not positive');
select throws_ok($$select ai.act_as('tenant_a'); select ai.set_queue_deadlines('default', '1 hour')$$, 'AS007', null,
                 'a service acting for a tenant may not');

select * from finish();
rollback;

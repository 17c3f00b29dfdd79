\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

set local role tenant_a;
select ai.cancel_job(:id) is not null as cancelled \gset
set local role app_service;
select throws_ok(format('select ai.complete_job(%s, %s)', :id, :token), 'AS006', format('job %s: lease lost', :id), 'the worker cannot complete it');
select throws_ok(format('select ai.renew_lease(%s, %s)', :id, :token), 'AS006', format('job %s: lease lost', :id), 'nor renew its lease');
select is((select count(*)::int from ai.claim_job('w2')), 0, 'and nobody claims it again');

select * from finish();
rollback;

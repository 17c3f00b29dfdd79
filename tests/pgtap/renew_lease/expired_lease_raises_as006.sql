\ir ../fixtures/helpers.sql
begin;
select plan(1);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

select set_config('ai.frozen_now', '2030-01-01 00:01:00+00', true) is not null as moved \gset
select throws_ok(format('select ai.renew_lease(%s, %s)', :id, :token), 'AS006', format('job %s: lease lost', :id), 'a lease that ran out cannot be renewed, even if nobody took the job yet');

select * from finish();
rollback;

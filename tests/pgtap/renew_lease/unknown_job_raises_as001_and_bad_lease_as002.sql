\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

select throws_ok($$select ai.renew_lease(-1, 1)$$, 'AS001', 'job -1 not found', 'unknown job');
select throws_ok(format('select ai.renew_lease(%s, %s, %L)', :id, :token, '0 seconds'), 'AS002', 'lease must be a positive interval, not 00:00:00', 'zero lease');

select * from finish();
rollback;

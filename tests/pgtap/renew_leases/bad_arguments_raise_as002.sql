\ir ../fixtures/helpers.sql
begin;
select plan(6);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

select throws_ok(format('select * from ai.renew_leases(%L, array[%s], array[%s], %L)', 'w1', :id, :token, '0 seconds'),
                 'AS002', 'lease must be a positive interval, not 00:00:00', 'a lease that is not positive');
select throws_ok(format('select * from ai.renew_leases(%L, array[%s], array[%s], %L)', '', :id, :token, '1 minute'),
                 'AS002', null, 'an empty worker_id');
select throws_ok(format('select * from ai.renew_leases(%L, array[%s, %s], array[%s], %L)', 'w1', :id, :id, :token, '1 minute'),
                 'AS002', 'renew_leases: 2 job_ids but 1 fencing_tokens', 'arrays of different lengths');
select throws_ok(format('select * from ai.renew_leases(%L, null, array[%s], %L)', 'w1', :token, '1 minute'),
                 'AS002', 'renew_leases: job_ids and fencing_tokens must not be NULL', 'a NULL array');
select throws_ok(format('select * from ai.renew_leases(%L, (select array_agg(i::bigint) from generate_series(1, 1001) i), (select array_agg(1::bigint) from generate_series(1, 1001) i), %L)', 'w1', '1 minute'),
                 'AS002', 'renew_leases: at most 1000 jobs per call, not 1001', 'more than 1000 jobs');
reset role;  -- assertions on tables run as the superuser (no role holds a table privilege)
select is((select lease_expires_at from ai.agent_jobs where job_id = :id), '2030-01-01 00:01:00+00'::timestamptz,
          'nothing was renewed');
set local role app_service;

select * from finish();
rollback;

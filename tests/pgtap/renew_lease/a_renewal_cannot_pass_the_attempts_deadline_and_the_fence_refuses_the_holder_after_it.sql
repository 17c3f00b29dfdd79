\ir ../fixtures/helpers.sql
begin;
select plan(6);
\ir ../fixtures/queue.sql

-- A hung handler renews its lease every 20 seconds: the renewals stop at the attempt's deadline
-- (claimed_at + 30 s), and from then on the fence refuses the holder's late writes (AS006).
set local role tenant_a;
select (ai.enqueue_job('qa1', timeout => '30 seconds')).job_id as id \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute')).fencing_token as token \gset
select set_config('ai.frozen_now', '2030-01-01 00:00:20+00', true) is not null as moved \gset
select is(ai.renew_lease(:id, :token, '1 minute'), '2030-01-01 00:00:30+00'::timestamptz,
          'renew_lease extends only to the attempt''s deadline');
select is((select r.lease_expires_at from ai.renew_leases('w1', array[:id]::bigint[], array[:token]::bigint[], '1 minute') r),
          '2030-01-01 00:00:30+00'::timestamptz, 'renew_leases too');
select set_config('ai.frozen_now', '2030-01-01 00:00:30+00', true) is not null as moved \gset
select throws_ok(format('select ai.renew_lease(%s, %s)', :id, :token), 'AS006', format('job %s: lease lost', :id),
                 'at the deadline the lease cannot be renewed');
select throws_ok(format('select ai.fenced_write(%s, %s)', :id, :token), 'AS006', format('job %s: lease lost', :id),
                 'the hung handler''s fenced writes are refused');
select throws_ok(format('select ai.complete_job(%s, %s)', :id, :token), 'AS006', format('job %s: lease lost', :id),
                 'and its late completion');
select is((select count(*)::int from ai.renew_leases('w1', array[:id]::bigint[], array[:token]::bigint[], '1 minute')), 0,
          'renew_leases leaves it out');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(7);
\ir ../fixtures/queue.sql

select set_config('ai.frozen_server_start', '2029-12-31 00:00:00+00', true) is not null as started_long_ago \gset
set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as a \gset
select (ai.enqueue_job('qa2')).job_id as b \gset
set local role app_service;
-- w-live took a liveness hold and claimed a; w-plain never took one and claimed b (an hour lease each).
select ai.hold_worker_liveness('w-live') as held \gset
select (ai.claim_jobs('w-live', '1 hour', 'default', 1)).fencing_token as token_a \gset
select (ai.claim_jobs('w-plain', '1 hour', 'default', 1)).fencing_token as token_b \gset
-- w-live's connection goes (here: it lets go of its lock, class ai._liveness_class(); the row still
-- says it keeps one). A claim takes it for dead once its hold has been free for half a second.
select pg_advisory_unlock(1095522636, hashtext('w-live')) as unlocked \gset
select is((select count(*)::int from ai.claim_jobs('w2', '1 minute', 'default', 5)), 0,
          'a hold found free just now is not yet taken for dead (the worker may be taking it again)');
-- half a second later (on the server's clock, which the test moves back instead of waiting)
reset role;
update ai.queue_workers set free_since = free_since - interval '1 second' where worker_id = 'w-live';
set local role app_service;
select results_eq($$select job_id, fencing_token, attempts from ai.claim_jobs('w2', '1 minute', 'default', 5)$$,
                  format('values (%s::bigint, %s::bigint, 2)', :a, :token_a::bigint + 1),
                  'a claim takes over the job of the dead worker at once, under a new token, as an attempt');
select throws_ok(format('select ai.complete_job(%s, %s)', :a, :token_a), 'AS006', format('job %s: lease lost', :a),
                 'the dead worker is fenced out');
select is((select outcome from ai.job_attempts(:a) where attempt = 1), 'expired', 'its attempt ended as expired');
select is((ai.get_job(:b)).lease_owner, 'w-plain', 'a worker without a liveness hold keeps its lease');
select ai.hold_worker_liveness('w-self') as held_self \gset
set local role tenant_a;
select (ai.create_session('qa3')).thread_id as qa3 \gset
select (ai.enqueue_job('qa3')).job_id as d \gset
set local role app_service;
select (ai.claim_jobs('w-self', '1 hour', 'default', 1)) is not null as claimed_self \gset
select pg_advisory_unlock(1095522636, hashtext('w-self')) as unlocked_self \gset
reset role;
update ai.queue_workers set free_since = clock_timestamp() - interval '1 second' where worker_id = 'w-self';
set local role app_service;
select is((select count(*)::int from ai.claim_jobs('w-self', '1 minute', 'default', 5)), 0,
          'a worker never takes its own jobs for a dead worker''s (it claims: it is alive)');
-- in the first 30 seconds after the server started, the leases alone decide
set local role tenant_b;
select (ai.enqueue_job('qb1')).job_id as c \gset
set local role app_service;
select ai.hold_worker_liveness('w3') as held3 \gset
select (ai.claim_jobs('w3', '1 hour', 'default', 1)) is not null as claimed3 \gset
select pg_advisory_unlock(1095522636, hashtext('w3')) as unlocked3 \gset
select set_config('ai.frozen_server_start', '2029-12-31 23:59:40+00', true) is not null as restarted \gset
select is((select count(*)::int from ai.claim_jobs('w4', '1 minute', 'default', 5)), 0,
          'within 30 seconds of a start no job is taken from a worker without its hold');

select * from finish();
rollback;

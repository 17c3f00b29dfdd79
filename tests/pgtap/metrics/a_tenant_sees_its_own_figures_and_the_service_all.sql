\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/queue.sql
delete from ai.side_effects;

set local role tenant_b;
select count(ai.enqueue_job('qb1', max_attempts => 1)) from generate_series(1, 3) \gset
set local role tenant_a;
select ai.enqueue_job('qa1') is not null as q \gset
-- the first of tenant_b's jobs fails for good
set local role app_service;
select job_id as jb, fencing_token as tb from ai.claim_job('w1', '1 minute') \gset
select ai.fail_job(:jb, :tb, 'boom') is not null as f \gset

select is((select value from ai.metrics() where metric = 'agent_state_jobs' and labels = '{"queue": "default", "state": "PENDING"}'),
          3::double precision, 'the service counts every tenant''s pending jobs');
set local role tenant_b;
select is((select value from ai.metrics() where metric = 'agent_state_jobs' and labels = '{"queue": "default", "state": "PENDING"}'),
          2::double precision, 'tenant_b its own two');
select is((select value from ai.metrics() where metric = 'agent_state_dead_jobs' and labels = '{"queue": "default"}'),
          1::double precision, 'and its dead job');
set local role tenant_a;
select results_eq($$select metric, value from ai.metrics()
                    where metric in ('agent_state_jobs', 'agent_state_dead_jobs', 'agent_state_attempts_failed')
                      and labels ->> 'queue' = 'default' and (labels ->> 'state' is null or labels ->> 'state' in ('PENDING', 'FAILED'))
                    order by 1, 2$$,
                  $$values ('agent_state_attempts_failed', 0::double precision), ('agent_state_dead_jobs', 0),
                           ('agent_state_jobs', 0), ('agent_state_jobs', 1)$$,
                  'tenant_a sees its one pending job and none of tenant_b''s failures');
select is((select count(*)::int from ai.metrics() where metric = 'agent_state_checkpoint_bytes_per_step'), 0,
          'a tenant gets no figure made of every tenant''s rows');

select * from finish();
rollback;

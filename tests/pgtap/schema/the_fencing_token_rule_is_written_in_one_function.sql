\ir ../fixtures/helpers.sql
begin;
select plan(3);

-- The job/token rule of a write made for a job is one function, ai._fence (issue 22): before it,
-- three shapes (ai._check_job_token, put_checkpoint's ai._fence(job_id, fencing_token) and the
-- inline test of request_human) gave three answers, and only one of them checked the thread.
select is(array(select p.oid::regprocedure::text from pg_proc p
                where p.pronamespace = 'ai'::regnamespace
                  and (p.prosrc like '%fencing_token must not be NULL when job_id is given%'
                       or p.prosrc like '%job_id must not be NULL when fencing_token is given%'
                       or p.prosrc like '%does not advance thread%')
                order by 1),
          array['ai._fence(text,bigint,bigint)'], 'the messages of the rule are written in ai._fence only');
-- Every function that takes a job_id and a fencing_token calls the guard, except the queue's own
-- verbs on the job itself (they fence in their UPDATE) and the internal helpers of the rule. On a
-- Citus formation a delegated write is an SQL wrapper (ai._formation_delegate) whose body as
-- deployed, ai._delegated_<name>_body, calls it.
select is(array(select p.oid::regprocedure::text from pg_proc p
                where p.pronamespace = 'ai'::regnamespace
                  and (select count(*) from unnest(p.proargnames[1:p.pronargs]) a where a in ('job_id', 'fencing_token')) = 2
                  and p.proname not in ('renew_lease', 'fenced_write', 'complete_job', 'fail_job', 'release_job', 'snooze_job',
                                        '_raise_lease_lost', '_check_side_effect_args', '_fence',
                                        '_queue_fence_check')
                  and p.prosrc not like '%ai.\_fence(%'
                  and not exists (select from pg_proc b
                                   where b.pronamespace = p.pronamespace and b.proname = '_delegated_' || p.proname || '_body'
                                     and b.proargtypes = p.proargtypes and b.prosrc like '%ai.\_fence(%')
                order by 1),
          '{}'::text[], 'every write made for a job calls ai._fence');
select is(array(select p.oid::regprocedure::text from pg_proc p
                where p.pronamespace = 'ai'::regnamespace and p.prosrc like '%ai.fenced\_write(%'
                order by 1),
          array['ai._fence(text,bigint,bigint)'], 'and none calls ai.fenced_write but the guard');

select * from finish();
rollback;

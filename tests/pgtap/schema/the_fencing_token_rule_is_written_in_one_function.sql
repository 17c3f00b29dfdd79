\ir ../fixtures/helpers.sql
begin;
select plan(2);

-- "fencing_token must not be NULL when job_id is given" is one rule: ai._check_job_token holds
-- it, and every guard of a fenced write calls that function instead of repeating it.
select is(array(select p.oid::regprocedure::text from pg_proc p
                where p.pronamespace = 'ai'::regnamespace
                  and p.prosrc like '%fencing_token must not be NULL when job_id is given%'
                order by 1),
          array['ai._check_job_token(bigint,bigint)'], 'the message is written in ai._check_job_token only');
select is(array(select p.oid::regprocedure::text from pg_proc p
                where p.pronamespace = 'ai'::regnamespace
                  and p.prosrc ~ '(job_id|a_job)\s+is\s+not\s+null\s+and\s+(fencing_token|a_token)\s+is\s+null'
                order by 1),
          array['ai._check_job_token(bigint,bigint)'], 'and so is the test');

select * from finish();
rollback;

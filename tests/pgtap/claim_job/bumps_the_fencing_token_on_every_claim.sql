\ir ../fixtures/helpers.sql
begin;
select plan(1);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1', max_attempts => 10)).job_id as id \gset
set local role app_service;
create temp table tokens (n int, token bigint) on commit drop;
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
do $$
declare
  j ai.agent_jobs;
begin
  for n in 1..4 loop
    select * into j from ai.claim_job('w', '1 minute');
    insert into tokens values (n, j.fencing_token);
    if n % 2 = 0 then
      perform ai.release_job(j.job_id, j.fencing_token);
    else
      perform ai.fail_job(j.job_id, j.fencing_token, 'boom', interval '0');
    end if;
  end loop;
end
$$;
set local role app_service;
select results_eq($$select token from tokens order by n$$, array[1, 2, 3, 4]::bigint[], 'each claim (after a fail or a release) bumps the token by one');

select * from finish();
rollback;

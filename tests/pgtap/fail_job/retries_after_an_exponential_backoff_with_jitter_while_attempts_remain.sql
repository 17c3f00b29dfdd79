\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as id \gset
set local role app_service;
create temp table delays (attempt int, delay interval) on commit drop;
do $$
declare
  j ai.agent_jobs;
  f ai.agent_jobs;
begin
  for n in 1..4 loop
    select * into j from ai.claim_job('w', '1 minute');
    f := ai.fail_job(j.job_id, j.fencing_token, 'boom ' || n);
    insert into delays values (n, f.run_at - ai.now());
    perform set_config('ai.frozen_now', f.run_at::text, true);
  end loop;
end
$$;
select ok((select bool_and(delay >= make_interval(secs => 2 ^ (attempt - 1) / 2) and delay <= make_interval(secs => 2 ^ (attempt - 1))) from delays),
          'attempt n waits between 2^(n-2) and 2^(n-1) seconds');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
create temp table j on commit drop as select * from ai.agent_jobs where job_id = :id;
select is((status, attempts, last_error), ('PENDING'::text, 4, 'boom 4'::text), 'PENDING again after 4 of 5 attempts, with the last error') from j;
select is((lease_owner, lease_expires_at, finished_at), (null::text, null::timestamptz, null::timestamptz), 'no lease, not finished') from j;

select * from finish();
rollback;

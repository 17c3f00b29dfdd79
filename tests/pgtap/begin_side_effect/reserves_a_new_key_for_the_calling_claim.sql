\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/side_effects.sql

select results_eq(format($$select outcome, attempt, taken_over, result, holder_job_id from ai.begin_side_effect('qa1', 'k1', '{"amount": 5}', %s, %s)$$, :job, :token),
                  format($$values ('execute', 1, false, null::jsonb, %s::bigint)$$, :job), 'a new key: execute, attempt 1, held by the job');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select status from ai.side_effects where idempotency_key = 'k1'), 'reserved', 'the ledger row is reserved');
select is((select (owner, job_id, fencing_token)::text from ai.side_effects where idempotency_key = 'k1'),
          format('(tenant_a,%s,%s)', :job, :token), 'owned by the session''s owner, held by (job, token)');
select is((select reserved_until from ai.side_effects where idempotency_key = 'k1'), null, 'with a job, the lease decides (no reserved_until)');
set local role app_service;
select * from finish();
rollback;

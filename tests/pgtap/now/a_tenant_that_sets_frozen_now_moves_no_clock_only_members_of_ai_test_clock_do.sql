\ir ../fixtures/helpers.sql
begin;
select plan(7);

-- A tenant as production has one: a member of ai_user, not of the tests' role ai_test_clock.
create role clockless_tenant login;
grant ai_user to clockless_tenant;
delete from ai.agent_jobs where queue = 'clockless';

set local role clockless_tenant;
select ai.create_session('clk1') is not null as made \gset
select (ai.enqueue_job('clk1', queue => 'clockless')).job_id as job \gset
-- a worker holds the job (its lease runs by the wall clock) and reserves a side effect
set local role app_service;
select set_config('ai.frozen_now', '', true) is not null as unfrozen \gset
select fencing_token as token from ai.claim_job('w1', '1 minute', 'clockless') \gset
select is((select outcome from ai.begin_side_effect('clk1', 'k1', '{}', :job, :token)), 'execute', 'the worker reserves the key');

-- the tenant moves "its" clock a century ahead, then a century back
set local role clockless_tenant;
select set_config('ai.frozen_now', '2126-01-01 00:00:00+00', true) is not null as moved \gset
select cmp_ok(ai.now(), '<', '2100-01-01 00:00:00+00'::timestamptz, 'ai.now() ignores ai.frozen_now for a tenant');
select is((select outcome from ai.begin_side_effect('clk1', 'k1', '{}')), 'busy',
          'the live worker''s reservation is not taken over by the tenant''s clock');
select set_config('ai.frozen_now', '1999-01-01 00:00:00+00', true) is not null as moved \gset
select cmp_ok((ai.record_usage('clk1', 'u1', 'm', 1, 1, 0)).created_at, '>', '2020-01-01 00:00:00+00'::timestamptz,
              'a usage record is stamped with the real time, not backdated');
select cmp_ok((ai.create_session('clk2')).created_at, '>', '2020-01-01 00:00:00+00'::timestamptz,
              'inside SECURITY DEFINER functions too');

-- the tests' roles (members of ai_test_clock) still freeze it
set local role tenant_a;
select is(ai.now(), '1999-01-01 00:00:00+00'::timestamptz, 'a member of ai_test_clock still freezes the clock');
reset role;
select is(ai.now(), '1999-01-01 00:00:00+00'::timestamptz, 'so does a superuser (a member of every role)');

select * from finish();
rollback;

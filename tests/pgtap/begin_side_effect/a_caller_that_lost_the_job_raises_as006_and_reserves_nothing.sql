\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/side_effects.sql

select set_config('ai.frozen_now', '2030-01-01 00:01:00+00', true) is not null as moved \gset
select throws_ok(format($$select ai.begin_side_effect('qa1', 'k1', '{}', %s, %s)$$, :job, :token), 'AS006', format('job %s: lease lost', :job),
                 'an expired lease cannot reserve');
select (ai.claim_job('w2', '1 minute')).fencing_token as token2 \gset
select throws_ok(format($$select ai.begin_side_effect('qa1', 'k1', '{}', %s, %s)$$, :job, :token), 'AS006', format('job %s: lease lost', :job),
                 'a stale token cannot reserve');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.side_effects where thread_id = 'qa1'), 0, 'nothing reserved');
set local role app_service;
select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(6);

set local ai.frozen_now = '2030-01-01 00:00:00+00';
set local role tenant_a;
select count(ai.create_session('t-' || s)) from unnest(array['completed', 'failed', 'cancelled']) s;
select count(ai.append_message_idempotent('t-' || s, 'user', '"before"')) from unnest(array['completed', 'failed', 'cancelled']) s;
select count(ai.set_session_status('t-' || s, s)) from unnest(array['completed', 'failed', 'cancelled']) s;

set local ai.frozen_now = '2030-01-02 00:00:00+00';
select throws_ok(format('select ai.append_message_idempotent(%L, %L, %L)', 't-' || s, 'user', '"after"'), 'AS004',
                 format('session t-%s is %s: no more messages', s, s), format('a %s session takes no message', s))
from unnest(array['completed', 'failed', 'cancelled']) s;
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.session_messages), 3, 'no message written');
select is((select count(*)::int from ai.session_messages), 3, 'no message added');
select is((select max(updated_at) from ai.agent_sessions), '2030-01-01 00:00:00+00'::timestamptz, 'updated_at unchanged');
set local role tenant_a;

select * from finish();
rollback;

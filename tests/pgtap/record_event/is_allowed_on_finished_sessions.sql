\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select count(ai.create_session('t-' || s)) from unnest(array['completed', 'failed', 'cancelled']) s;
select count(ai.set_session_status('t-' || s, s)) from unnest(array['completed', 'failed', 'cancelled']) s;
select is((ai.record_event('t-' || s, 'cleanup')).kind, 'cleanup', format('an event may be recorded on a %s session', s))
from unnest(array['completed', 'failed', 'cancelled']) s;

select * from finish();
rollback;

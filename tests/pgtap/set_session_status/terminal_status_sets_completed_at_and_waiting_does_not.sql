\ir ../fixtures/helpers.sql
begin;
select plan(8);

set local ai.frozen_now = '2030-01-01 00:00:00+00';
set local role tenant_a;
select count(ai.create_session('t-' || s)) from unnest(array['waiting', 'completed', 'failed', 'cancelled']) s;

set local ai.frozen_now = '2030-01-02 00:00:00+00';
select is((ai.set_session_status('t-' || s, s)).completed_at, '2030-01-02 00:00:00+00'::timestamptz,
          format('%s sets completed_at to now', s))
from unnest(array['completed', 'failed', 'cancelled']) s;
select is((ai.get_session('t-' || s)).updated_at, '2030-01-02 00:00:00+00'::timestamptz,
          format('%s sets updated_at to now', s))
from unnest(array['completed', 'failed', 'cancelled']) s;
select is((ai.set_session_status('t-waiting', 'waiting')).completed_at, null::timestamptz, 'waiting leaves completed_at NULL');
select is((ai.get_session('t-completed')).created_at, '2030-01-01 00:00:00+00'::timestamptz, 'created_at is unchanged');

select * from finish();
rollback;

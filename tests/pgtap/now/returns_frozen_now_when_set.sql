\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local ai.frozen_now = '2030-01-01 00:00:00+00';
set local role tenant_a;
select is(ai.now(), '2030-01-01 00:00:00+00'::timestamptz, 'ai.now() returns ai.frozen_now');
set local ai.frozen_now = '2031-06-15 12:30:00+00';
select is(ai.now(), '2031-06-15 12:30:00+00'::timestamptz, 'moving ai.frozen_now moves ai.now()');

select * from finish();
rollback;

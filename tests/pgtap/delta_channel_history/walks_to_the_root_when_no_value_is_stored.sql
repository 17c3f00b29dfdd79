\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/delta.sql
select plan(2);
set local role tenant_a;
select pg_temp.delta_chain('t-dh', 4, '{}');

select is(pg_temp.history('t-dh', 'd000004'), array['w1', 'w2', 'w3'], 'no seed row: every ancestor''s writes');
select is(pg_temp.history('t-dh', 'd000001'), '{}'::text[], 'nothing before the root');

select * from finish();
rollback;

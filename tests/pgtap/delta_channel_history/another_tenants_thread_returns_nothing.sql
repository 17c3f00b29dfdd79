\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/delta.sql
select plan(2);
set local role tenant_a;
select pg_temp.delta_chain('t-dh', 4, array[1]);
reset role;
set local role tenant_b;
select is(pg_temp.history('t-dh', 'd000004'), '{}'::text[], 'tenant_b sees no value and no write of tenant_a''s thread');
reset role;
set local role tenant_a;
select is(pg_temp.history('t-dh', 'd000004'), array['seed:s1', 'w1', 'w2', 'w3'], 'its owner does');

select * from finish();
rollback;

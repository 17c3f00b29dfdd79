\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/delta.sql
select plan(1);
set local role tenant_a;
select pg_temp.delta_chain('t-dh', 3, array[1]);
select ai.put_writes('t-dh', '', 'd000003', 'late', array[1], array['ch'], array['test'], array['\x78']::bytea[]);

select is(pg_temp.history('t-dh', 'd000003'), array['seed:s1', 'w1', 'w2'],
          'd3''s own writes (w3 and a later one) are pending for the next step, not part of its value');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/delta.sql
select plan(2);
set local role tenant_a;
-- d1 .. d8, values stored at d1 and d4: d8 is rebuilt from d4's value and the writes of d4 .. d7
select pg_temp.delta_chain('t-dh', 8, array[1, 4]);

select is(pg_temp.history('t-dh', 'd000008'), array['seed:s4', 'w4', 'w5', 'w6', 'w7'],
          'the seed first, then the writes of the seed checkpoint and of every ancestor since, oldest first');
select is(pg_temp.history('t-dh', 'd000004'), array['seed:s1', 'w1', 'w2', 'w3'],
          'from a checkpoint that stores a value itself: its ancestors'' history (the caller does not ask)');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/delta.sql
select plan(2);
set local role tenant_a;
-- d1 .. d5, then a replay from d2: r1 .. r3 (ids newer than d5)
select pg_temp.delta_chain('t-dh', 5, array[1]);
select pg_temp.delta_chain('t-dh', 3, '{}', prefix => 'r', first_parent => 'd000002');

select is(pg_temp.history('t-dh', 'r000003'), array['seed:s1', 'w1', 'w2', 'r1', 'r2'],
          'the replay branch: d3 .. d5 are skipped');
select is(pg_temp.history('t-dh', 'd000005'), array['seed:s1', 'w1', 'w2', 'w3', 'w4'], 'the original branch');

select * from finish();
rollback;

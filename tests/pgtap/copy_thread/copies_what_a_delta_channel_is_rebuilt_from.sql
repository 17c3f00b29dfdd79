\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/delta.sql
select plan(2);
set local role tenant_a;
select pg_temp.delta_chain('t-cd', 6, array[2]);
select pg_temp.delta_chain('t-cd', 2, '{}', prefix => 'r', first_parent => 'd000003');

select is(ai.copy_thread('t-cd', 't-cd-copy'), 8, 'every checkpoint is copied');
select is(pg_temp.history('t-cd-copy', 'r000002'), pg_temp.history('t-cd', 'r000002'),
          'a delta channel is rebuilt in the copy as in the source (seed s2, writes w2, w3, r1)');

select * from finish();
rollback;

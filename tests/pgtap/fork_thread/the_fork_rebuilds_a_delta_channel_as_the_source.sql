\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/delta.sql
select plan(1);
set local role tenant_a;
select pg_temp.delta_chain('t-fd', 7, array[2, 5]);
select ai.fork_thread('t-fd', 'd000004', 't-fd-fork');

select is(pg_temp.history('t-fd-fork', 'd000004'), pg_temp.history('t-fd', 'd000004'),
          'the fork holds the ancestors and writes d4''s delta channel is rebuilt from (seed s2, w2, w3)');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(2);
set local role tenant_a;

select pg_temp.put_list('t-copy-delta', 'c1', null, 'v1', '\x9101');
select pg_temp.put_list('t-copy-delta', 'c2', 'c1', 'v2', '\x9102', 'v1');
select is(ai.fork_thread('t-copy-delta', 'c2', 't-copy-delta-fork'), 't-copy-delta-fork', 'a fork from the delta');
select is(pg_temp.list_value('t-copy-delta-fork', 'c2'), '\x920102'::bytea, 'reads whole in the fork');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(3);
set local role tenant_a;
select pg_temp.chain('t-many', 150);

select is((select count(*)::int from ai.list_checkpoints('t-many', '', null, null)), 100,
          'NULL max_rows (a v0.1.0 caller''s "all") is one page of 100');
select is((select count(*)::int from ai.list_checkpoints('t-many', '', 'c000051', null)), 50, 'the next page: before the last id');
select throws_ok($$select * from ai.list_checkpoints('t-many', '', null, 10001)$$, 'AS002', null, 'at most 10000 a page');

select * from finish();
rollback;

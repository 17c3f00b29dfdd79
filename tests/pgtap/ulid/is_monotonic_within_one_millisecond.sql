\ir ../fixtures/helpers.sql
begin;
select plan(2);
set local role tenant_a;

select set_config('ai.ulid_state', '', true);
select set_config('ai.frozen_now', '2026-01-01 00:00:00+00', true);
create temp table ids as select i, ai.ulid() as id from generate_series(1, 1000) i;
select is((select count(distinct id)::int from ids), 1000, '1000 ULIDs of one frozen millisecond are distinct');
select ok((select bool_and(id > prev) from (select id, lag(id) over (order by i) as prev from ids) s where prev is not null),
          'and strictly increasing in the order they were made');

select * from finish();
rollback;

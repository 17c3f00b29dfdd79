\ir ../fixtures/helpers.sql
begin;
select plan(2);
set local role tenant_a;

-- the example of the ULID specification
select is(ai.ulid_time('01ARZ3NDEKTSV4RRFFQ69G5FAV'), '2016-07-30 23:54:10.259+00'::timestamptz, 'spec example');
select is(ai.ulid_time('01arz3ndektsv4rrffq69g5fav'), '2016-07-30 23:54:10.259+00'::timestamptz, 'case-insensitive');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select ai.now() as t1 \gset
select pg_sleep(0.01);
select cmp_ok(ai.now(), '>', :'t1'::timestamptz, 'a later call returns a later time');
select cmp_ok(ai.now(), '>', now(), 'it is the wall clock, not the transaction start');
set local ai.frozen_now = '';
select cmp_ok(ai.now(), '>', :'t1'::timestamptz, 'an empty ai.frozen_now falls back to the wall clock');

select * from finish();
rollback;

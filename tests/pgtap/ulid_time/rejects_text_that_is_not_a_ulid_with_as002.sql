\ir ../fixtures/helpers.sql
begin;
select plan(4);
set local role tenant_a;

select throws_ok($$select ai.ulid_time(null)$$, 'AS002', null, 'NULL');
select throws_ok($$select ai.ulid_time('01ARZ3NDEK')$$, 'AS002', null, 'too short');
select throws_ok($$select ai.ulid_time('01ARZ3NDEKTSV4RRFFQ69G5FAU')$$, 'AS002', null, 'U is not Crockford base32');
select throws_ok($$select ai.ulid_time('81ARZ3NDEKTSV4RRFFQ69G5FAV')$$, 'AS002', null, 'over 48 bits of time');

select * from finish();
rollback;

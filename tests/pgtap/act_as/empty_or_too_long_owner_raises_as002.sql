\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role app_service;
select throws_ok($$select ai.act_as('')$$, 'AS002', 'owner must not be empty', 'empty owner');
select throws_ok(format('select ai.act_as(%L)', repeat('x', 256)), 'AS002', 'owner is longer than 255 bytes (256 bytes of UTF-8)', 'owner of 256 characters');
select is(ai.current_owner(), 'app_service', 'the acting owner was not changed');

select * from finish();
rollback;

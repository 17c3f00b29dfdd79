\ir ../fixtures/helpers.sql
begin;
select plan(2);
set local role tenant_a;

select is(ai.delete_for_runs(array[]::text[]), 0, 'an empty list deletes nothing');
select throws_ok($$select ai.delete_for_runs(array[null]::text[])$$, 'AS002', null, 'a NULL run id');

select * from finish();
rollback;

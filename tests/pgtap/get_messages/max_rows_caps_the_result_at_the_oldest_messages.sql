\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select ai.create_session('t-m');
select ai.append_message_idempotent('t-m', 'user', to_jsonb(i)) from generate_series(1, 5) i;

select results_eq($$select seq from ai.get_messages('t-m', 0, 2)$$, array[1, 2]::bigint[], 'the two oldest');
select results_eq($$select seq from ai.get_messages('t-m', 2, 2)$$, array[3, 4]::bigint[], 'paging with after_seq');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select ai.create_session('t-m');
select ai.append_message_idempotent('t-m', 'user', to_jsonb(i)) from generate_series(1, 5) i;

select results_eq($$select seq from ai.get_messages('t-m', 3)$$, array[4, 5]::bigint[], 'after seq 3');
select is_empty($$select * from ai.get_messages('t-m', 5)$$, 'nothing after the newest');
select results_eq($$select count(*)::int from ai.get_messages('t-m', 0)$$, array[5], 'after 0 is everything');

select * from finish();
rollback;

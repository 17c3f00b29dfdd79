\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select ai.create_session('t-m');
select ai.append_message_idempotent('t-m', 'user', to_jsonb(i)) from generate_series(1, 5) i;

select results_eq($$select seq from ai.visible_messages('t-m')$$, array[1, 2, 3, 4, 5]::bigint[], 'all when NULL');
select results_eq($$select seq from ai.visible_messages('t-m', 2)$$, array[4, 5]::bigint[], 'the newest two, oldest first');
select is_empty($$select * from ai.visible_messages('t-m', 0)$$, 'none for 0');

select * from finish();
rollback;

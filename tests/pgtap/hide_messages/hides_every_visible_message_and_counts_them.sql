\ir ../fixtures/helpers.sql
begin;
select plan(4);

set local role tenant_a;
select ai.create_session('t-m');
select ai.append_message_idempotent('t-m', 'user', to_jsonb(i)) from generate_series(1, 3) i;
select ai.hide_last_message('t-m');

select is(ai.hide_messages('t-m'), 2::bigint, 'the two still visible');
select is(ai.hide_messages('t-m'), 0::bigint, 'a retry hides nothing more');
select is_empty($$select * from ai.visible_messages('t-m')$$, 'nothing visible');
select ai.append_message_idempotent('t-m', 'user', '"after"');
select results_eq($$select content from ai.visible_messages('t-m')$$, array['"after"'::jsonb], 'a later message is visible');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(4);

set local role tenant_a;
select ai.create_session('t-m');
select ai.append_message_idempotent('t-m', 'user', to_jsonb(i)) from generate_series(1, 3) i;

select is((ai.hide_last_message('t-m')).content, '3'::jsonb, 'the newest first');
select is((ai.hide_last_message('t-m')).content, '2'::jsonb, 'then the one before');
select results_eq($$select seq from ai.visible_messages('t-m')$$, array[1]::bigint[], 'one left visible');
select is((select count(*)::int from ai.get_messages('t-m')), 3, 'nothing deleted');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(3);
set local role tenant_a;
select ai.create_session('vm-1');
select ai.append_message_idempotent('vm-1', 'user', jsonb_build_object('n', i)) from generate_series(1, 1005) i;

select is((select count(*)::int from ai.visible_messages('vm-1', null)), 1000, 'NULL (a v0.1.0 caller''s "all") is one page of 1000');
select results_eq($$select seq from ai.visible_messages('vm-1', 2, before_seq => 4)$$, $$values (2::bigint), (3::bigint)$$,
                  'the page before seq 4, oldest first');
select is((select count(*)::int from ai.visible_messages('vm-1', 0)), 0, 'zero rows when asked for none');

select * from finish();
rollback;

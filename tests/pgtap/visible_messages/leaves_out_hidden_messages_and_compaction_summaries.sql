\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select ai.create_session('t-m');
select ai.append_message_idempotent('t-m', 'user', to_jsonb(i)) from generate_series(1, 4) i;
select ai.record_compaction('t-m', 'summary of 1..2', 2);
select ai.hide_last_message('t-m');

select results_eq($$select seq from ai.visible_messages('t-m')$$, array[1, 2, 3]::bigint[],
                  'message 4 is hidden and summary 5 is not an item');
select is((select count(*)::int from ai.get_messages('t-m')), 5, 'every message is still stored');

select * from finish();
rollback;

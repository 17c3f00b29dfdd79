\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/trajectory.sql

select results_eq($$select seq from ai.trajectory('tr')$$, array[1, 2, 3, 5, 6, 7]::bigint[],
                  'every message in order, the compaction summary (seq 4) left out');
select results_eq($$select tool_name, arguments from ai.trajectory('tr') where role = 'tool_call'$$,
                  $$values ('search', '{"city": "Lisbon"}'::jsonb), ('book', '{"hotel": "Alfama Inn"}'::jsonb)$$,
                  'tool calls with their names and arguments ("arguments" or "args")');
select is((select tool_name from ai.trajectory('tr') where role = 'tool_result'), 'search', 'tool results carry the tool name');
select results_eq($$select seq from ai.trajectory('tr') where is_final$$, array[7]::bigint[], 'the last assistant message is final');
select is((select count(*)::int from ai.trajectory('tr') where is_final is null), 0, 'is_final is never NULL');

select * from finish();
rollback;

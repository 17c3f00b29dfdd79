\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/compaction.sql
select ai.record_compaction('c1', 'summary of 1..40', 40, 30);

select is((ai.context_window('c1', 600, 10)).messages -> 0 ->> 'is_summary', 'true', 'the summary comes first');
select is((ai.context_window('c1', 600, 10)).messages -> 0 -> 'content' ->> 'text', 'summary of 1..40', 'with its text');
select is((select array_agg((m ->> 'seq')::int) from jsonb_array_elements((ai.context_window('c1', 600, 10)).messages) m),
          array[51, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50], 'then messages 41..50 in order');
select is((ai.context_window('c1', 600, 10)).total_tokens, 130::bigint, '30 + 10 x 10 tokens');
select is((ai.context_window('c1', 600, 10)).summary_through_seq, 40::bigint, 'reports what the summary covers');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(6);
\ir ../fixtures/compaction.sql

select is((ai.context_window('c1', 1000, 10)).total_tokens, 500::bigint, 'all 50 messages, 10 tokens each');
select is(jsonb_array_length((ai.context_window('c1', 1000, 10)).messages), 50, '50 messages in the window');
select is((ai.context_window('c1', 1000, 10)).compaction_due, false, '500 tokens are under 0.7 x 1000');
select is((ai.context_window('c1', 600, 10)).compaction_due, true, '500 tokens are over 0.7 x 600');
select is(((ai.context_window('c1', 600, 10)).compact_from_seq, (ai.context_window('c1', 600, 10)).compact_through_seq),
          (1::bigint, 40::bigint), 'compact 1..40, keep the last 10');
select is((ai.context_window('c1', 600, 60)).compact_through_seq, null, 'nothing to compact when keep_last covers everything');

select * from finish();
rollback;

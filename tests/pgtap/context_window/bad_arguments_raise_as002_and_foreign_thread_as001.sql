\ir ../fixtures/helpers.sql
begin;
select plan(6);
\ir ../fixtures/compaction.sql

select throws_ok($$select ai.context_window('c1', 0)$$, 'AS002', 'window_tokens must be 1 or more, not 0', 'zero window');
select throws_ok($$select ai.context_window('c1', null)$$, 'AS002', 'window_tokens must be 1 or more, not NULL', 'NULL window');
select throws_ok($$select ai.context_window('c1', 100, -1)$$, 'AS002', 'keep_last must be 0 or more, not -1', 'negative keep_last');
select throws_ok($$select ai.context_window('c1', 100, 5, 1.5)$$, 'AS002', 'threshold must be in (0, 1], not 1.5', 'threshold over 1');
select throws_ok($$select ai.context_window('nope', 100)$$, 'AS001', 'thread nope not found', 'unknown thread');
set local role tenant_b;
select throws_ok($$select ai.context_window('c1', 100)$$, 'AS001', 'thread c1 not found', 'another tenant''s thread is unknown');

select * from finish();
rollback;

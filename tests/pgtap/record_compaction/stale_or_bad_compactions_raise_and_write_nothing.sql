\ir ../fixtures/helpers.sql
begin;
select plan(9);
\ir ../fixtures/compaction.sql
select ai.record_compaction('c1', 'summary of 1..40', 40, 30);

select throws_ok($$select ai.record_compaction('c1', 'older', 30)$$, 'AS040',
                 'thread c1 is already compacted through seq 40; a summary through 30 is stale', 'a range the newest summary covers is stale');
select throws_ok($$select ai.record_compaction('c1', 'past the end', 99)$$, 'AS002',
                 'through_seq 99 is past the last message (51) of thread c1', 'through_seq past the last message');
select throws_ok($$select ai.record_compaction('c1', 'zero', 0)$$, 'AS002', 'through_seq must be 1 or more, not 0', 'through_seq 0');
select throws_ok($$select ai.record_compaction('c1', '', 45)$$, 'AS002', 'summary must not be empty', 'empty summary');
select throws_ok($$select ai.record_compaction('c1', null, 45)$$, 'AS002', 'summary must not be NULL', 'NULL summary');
select throws_ok($$select ai.record_compaction('c1', 'x', 45, -1)$$, 'AS002', 'token_count must not be negative, not -1', 'negative tokens');
select throws_ok($$select ai.record_compaction('nope', 'x', 1)$$, 'AS001', 'thread nope not found', 'unknown thread');
set local role tenant_b;
select throws_ok($$select ai.record_compaction('c1', 'x', 45)$$, 'AS001', 'thread c1 not found', 'another tenant''s thread');
reset role;
select is((select max(seq) from ai.session_messages where thread_id = 'c1'), 51::bigint, 'nothing was written');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/compaction.sql

select is((ai.record_compaction('c1', 'summary of 1..40', 40, 30)).seq, 51::bigint, 'the summary is message 51');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select content from ai.session_messages where thread_id = 'c1' and seq = 51),
          '{"text": "summary of 1..40", "compaction": {"from_seq": 1, "through_seq": 40}}'::jsonb,
          'it says which range it covers');
select is((select (role, token_count, idempotency_key)::text from ai.session_messages where thread_id = 'c1' and seq = 51),
          '(system,30,compaction:40)', 'a system message with its token count and key');
select is((select count(*)::int from ai.session_messages where thread_id = 'c1' and seq <= 50), 50, 'the originals stay');
set local role tenant_a;
select is((ai.record_compaction('c1', 'summary of 41..45', 45)).content -> 'compaction',
          '{"from_seq": 41, "through_seq": 45}'::jsonb, 'the next summary chains on from the previous range');

select * from finish();
rollback;

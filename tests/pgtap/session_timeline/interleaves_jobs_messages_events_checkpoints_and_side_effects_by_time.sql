\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role tenant_a;
set local ai.frozen_now = '2030-01-01 00:00:01+00';
select ai.create_session('tl') is not null as created \gset
set local ai.frozen_now = '2030-01-01 00:00:02+00';
select (ai.enqueue_job('tl', '{"step": 1}')).job_id as job \gset
set local ai.frozen_now = '2030-01-01 00:00:03+00';
select ai.append_message_idempotent('tl', 'user', '"hello"') is not null as appended \gset
set local ai.frozen_now = '2030-01-01 00:00:04+00';
select ai.put_checkpoint('tl', '', 'ck1', null, 'json', '\x7b7d', '{"step": 1, "source": "loop"}') as ck \gset
set local ai.frozen_now = '2030-01-01 00:00:05+00';
select ai.record_event('tl', 'tool_call', '{"tool": "search"}') is not null as recorded \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute')).fencing_token as token \gset
set local ai.frozen_now = '2030-01-01 00:00:06+00';
select outcome from ai.begin_side_effect('tl', 'email:1', '{"to": "x"}', :job, :token) \gset
set local role tenant_a;
set local ai.frozen_now = '2030-01-01 00:00:07+00';
select ai.append_message_idempotent('tl', 'assistant', '"done"') is not null as appended \gset

select results_eq(
  $$select item, ref, label from ai.session_timeline('tl') where item <> 'event' or label = 'tool_call'$$,
  format($$values ('job'::text, %s::text, 'IN_PROGRESS'::text), ('message', '1', 'user'), ('checkpoint', 'ck1', 'loop'),
                  ('event', %s, 'tool_call'), ('side_effect', 'email:1', 'reserved'), ('message', '2', 'assistant')$$,
         pg_catalog.quote_literal(:job),
         pg_catalog.quote_literal((select event_id from ai.get_events('tl') where kind = 'tool_call'))),
  'jobs, messages, checkpoints, events and side effects of the thread, oldest first');
select is((select detail from ai.session_timeline('tl') where item = 'message' and ref = '1'),
          '{"role": "user", "turn": null, "content": "hello", "token_count": 2}'::jsonb, 'a message carries its content');
select is((select count(*) from ai.session_timeline('tl', max_rows => 2)), 2::bigint, 'at most max_rows, the oldest');

select * from finish();
rollback;

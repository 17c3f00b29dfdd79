\ir ../fixtures/helpers.sql
begin;
select plan(6);
\ir ../fixtures/queue.sql

set local role tenant_a;
set local ai.frozen_now = '2030-01-01 00:00:01+00';
select ai.create_session('tn') is not null as created \gset
set local ai.frozen_now = '2030-01-01 00:00:02+00';
select (ai.enqueue_job('tn', '{"step": 1}')).job_id as job \gset
set local ai.frozen_now = '2030-01-01 00:00:03+00';
select ai.append_message_idempotent('tn', 'user', '"hello"') is not null as appended \gset
set local ai.frozen_now = '2030-01-01 00:00:04+00';
select ai.put_checkpoint('tn', '', 'ck1', null, 'json', '\x7b7d', '{"step": 1, "source": "loop"}') as ck \gset
set local ai.frozen_now = '2030-01-01 00:00:07+00';
select ai.append_message_idempotent('tn', 'assistant', '"done"') is not null as appended \gset
select count(*) as n from ai.session_timeline('tn') \gset

select results_eq(
  $$select item, ref from ai.session_timeline_newest('tn')$$,
  $$select item, ref from (select item, ref, row_number() over () as i from ai.session_timeline('tn')) t order by i desc$$,
  'the same rows as session_timeline, newest first');
select results_eq($$select item, ref from ai.session_timeline_newest('tn', 2)$$,
                  $$values ('message'::text, '2'::text), ('checkpoint', 'ck1')$$, 'the first page is the newest');
select results_eq(
  $$select item, ref from ai.session_timeline_newest('tn', 2, '2030-01-01 00:00:04+00', 'checkpoint', 'ck1')$$,
  $$values ('message'::text, '1'::text), ('job', (select job_id::text from ai.list_jobs(null, null, 'tn')))$$,
  'the next page: older than the last row''s (created_at, item, ref)');
select is(ai.session_timeline_total('tn'), :n::bigint, 'the total counts every item of the thread');
select throws_ok($$select * from ai.session_timeline_newest('tn', 2, '2030-01-01 00:00:04+00', 'checkpoint', null)$$,
                 'AS002', 'before_created_at, before_item and before_ref go together', 'a cursor in part is refused');
select throws_ok($$select * from ai.session_timeline_newest('tn', 2, '2030-01-01 00:00:04+00', 'message', 'x')$$,
                 'AS002', null, 'a message ref that is not its number is refused');

select * from finish();
rollback;

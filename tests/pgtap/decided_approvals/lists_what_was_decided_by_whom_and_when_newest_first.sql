\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/queue.sql

set local role tenant_a;
select ai.create_session(t) from unnest(array['da-1', 'da-2']) t;
select (ai.enqueue_job('da-1', '{}', 'da-q')).job_id as j1 \gset
select (ai.enqueue_job('da-2', '{}', 'da-q')).job_id as j2 \gset
set local role app_service;
select fencing_token as t1 from ai.claim_job('w', '1 minute', 'da-q') \gset
select fencing_token as t2 from ai.claim_job('w', '1 minute', 'da-q') \gset
select ai.request_human(:j1, :t1, 'ck-1', '{"send": "refund"}') is not null as asked1 \gset
select ai.request_human(:j2, :t2, 'ck-2', '{"send": "email"}') is not null as asked2 \gset
set local role tenant_a;
set local ai.frozen_now = '2031-01-01 00:00:01+00';
select ai.resolve_human('da-1', 'ck-1', '{"approved": true}') is not null as r1 \gset
set local ai.frozen_now = '2031-01-01 00:00:02+00';
select ai.resolve_human('da-2', 'ck-2', '{"approved": false, "reason": "no"}') is not null as r2 \gset

select results_eq(
  $$select thread_id, decision ->> 'approved', decided_by from ai.decided_approvals() where thread_id like 'da-%'$$,
  $$values ('da-2'::text, 'false'::text, 'tenant_a'::text), ('da-1', 'true', 'tenant_a')$$,
  'the decisions, newest first, with who decided');
select results_eq($$select thread_id from ai.decided_approvals(thread_id => 'da-1')$$, $$values ('da-1'::text)$$,
                  'one thread''s');
select results_eq(
  $$select thread_id from ai.decided_approvals(max_rows => 5, before_decided_at => '2031-01-01 00:00:02+00',
                                               before_approval_id => (select approval_id from ai.decided_approvals(thread_id => 'da-2')))
    where thread_id like 'da-%'$$,
  $$values ('da-1'::text)$$, 'the next page: older than the cursor');
select throws_ok($$select * from ai.decided_approvals(before_decided_at => now())$$, 'AS002', null, 'a cursor in part is refused');
set local role tenant_b;
select is_empty($$select * from ai.decided_approvals() where thread_id like 'da-%'$$, 'another tenant sees none of them');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1', max_attempts => 2)).job_id as id \gset
set local role app_service;
select (ai.claim_job('w')).fencing_token as t1 \gset
select ai.fail_job(:id, :t1, 'first', '0 seconds') is not null as f1 \gset
select (ai.claim_job('w')).fencing_token as t2 \gset
create temp table f on commit drop as select * from ai.fail_job(:id, :t2, 'second');
select is((status, attempts, last_error), ('FAILED'::text, 2, 'second'::text), 'FAILED after its second attempt') from f;
select is(finished_at, '2030-01-01 00:00:00+00'::timestamptz, 'finished now') from f;
select is((select count(*)::int from ai.claim_job('w')), 0, 'a dead job is never claimed');

select * from finish();
rollback;

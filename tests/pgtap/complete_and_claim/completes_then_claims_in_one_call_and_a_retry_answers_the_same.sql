\ir ../fixtures/helpers.sql
begin;
select plan(8);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as a \gset
select (ai.enqueue_job('qa1')).job_id as a2 \gset
select (ai.enqueue_job('qa2')).job_id as b \gset
set local role app_service;
select job_id as claimed from ai.claim_jobs('w', '1 minute', 'default', 1) \gset
select is(:claimed::bigint, :a::bigint, 'a is claimed (a2 waits behind it: one job per thread)');
-- One call: a completed, then the claim finds a2 (its thread is free now) and b.
create temp table first on commit drop as
  select * from ai.complete_and_claim('w', '1 minute', 'default', 5, 'request-1', array[:a]::bigint[], array[1]::bigint[],
                                      array['{"n": 1}']::jsonb[]);
select results_eq('select job_id, status from first where status = ''COMPLETED''', format('values (%s::bigint, ''COMPLETED'')', :a),
                  'the completion comes first, as a row of job_id and status');
select bag_eq('select job_id from first where status = ''IN_PROGRESS''', format('values (%s::bigint), (%s::bigint)', :a2, :b),
              'then the claim, which sees a''s thread free');
select is((ai.get_job(:a)).result, '{"n": 1}'::jsonb, 'a holds its result');
-- Its answer is lost: the same call again answers as the first did and does nothing more.
create temp table again on commit drop as
  select * from ai.complete_and_claim('w', '1 minute', 'default', 5, 'request-1', array[:a]::bigint[], array[1]::bigint[],
                                      array['{"n": 9}']::jsonb[]);
select bag_eq('select job_id, status, fencing_token from again', 'select job_id, status, fencing_token from first',
              'the retry answers with the same completion and the same jobs under the same tokens');
select is((ai.get_job(:a)).result, '{"n": 1}'::jsonb, 'a keeps its first result');
select is_empty(format('select * from ai.complete_and_claim(''w'', ''1 minute'', ''default'', 0, ''request-2'', array[%s]::bigint[], array[7]::bigint[])', :b),
                'a lost lease is left out, and max_jobs 0 claims nothing');
select throws_ok('select * from ai.complete_and_claim(''w'', ''1 minute'', ''default'', -1, ''request-3'', ''{}'', ''{}'')',
                 'AS002', null, 'max_jobs below 0 raises AS002');

select * from finish();
rollback;

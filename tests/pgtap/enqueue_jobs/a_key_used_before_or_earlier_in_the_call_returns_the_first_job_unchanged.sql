\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1', '{"n": 0}', 'batch', idempotency_key => 'k0')).job_id as before \gset
create temp table got as
select row_number() over () as i, j.*
from ai.enqueue_jobs(array['qa1', 'qa1', 'qa2', 'qa1'], array['{"n": 1}', '{"n": 2}', '{"n": 3}', '{"n": 4}']::jsonb[],
                     'batch', idempotency_keys => array['k0', 'k1', 'k1', null]) j;
reset role;
select is((select job_id from got where i = 1), :before::bigint, 'a key used before: the first job');
select is((select payload from got where i = 1), '{"n": 0}'::jsonb, 'unchanged');
select is((select job_id from got where i = 3), (select job_id from got where i = 2), 'a key repeated in the call: its first occurrence''s job');
select is((select count(*)::int from ai.agent_jobs where queue = 'batch'), 3, 'k0, k1 and the row without a key');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/queue.sql

set local role tenant_a;
select throws_ok($$select ai.enqueue_job('qa1', key => '@tenant_b')$$, 'AS002', null, 'a tenant cannot name another tenant''s own key');
select throws_ok($$select ai.enqueue_job('qa1', key => '')$$, 'AS002', null, 'an empty key');
select throws_ok($$select ai.enqueue_jobs(array['qa1'], array['{}'::jsonb], keys => array[repeat('k', 256)])$$, 'AS002', null, 'a key over 255 characters, in a batch');
select is((ai.enqueue_job('qa1')).key, '@tenant_a', 'no key: the owner''s own');
set local role tenant_b;
select is((ai.enqueue_job('qb1', key => 'openai')).key, 'openai', 'a named key is the queue''s: tenants that name it share it');

select * from finish();
rollback;

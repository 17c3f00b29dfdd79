\ir ../fixtures/helpers.sql
begin;
select plan(7);
\ir ../fixtures/queue.sql

set local role tenant_a;
select ai.set_session_status('qa2', 'completed') is not null as done \gset
select throws_ok($$select ai.enqueue_jobs(array['qa1', 'nope'], array['{}', '{}']::jsonb[])$$,
                 'AS001', 'thread nope not found', 'an unknown thread');
select throws_ok($$select ai.enqueue_jobs(array['qa1', 'qb1'], array['{}', '{}']::jsonb[])$$,
                 'AS001', 'thread qb1 not found', 'another tenant''s thread looks the same');
select throws_ok($$select ai.enqueue_jobs(array['qa1', 'qa2'], array['{}', '{}']::jsonb[])$$,
                 'AS004', 'session qa2 is completed: no more jobs', 'a finished session');
select throws_ok($$select ai.enqueue_jobs(array['qa1', 'qa1'], array['{}', jsonb_build_object('x', repeat('x', 1100000))])$$,
                 'AS003', null, 'a payload over 1 MiB');
select throws_ok($$select ai.enqueue_jobs(array['qa1', 'qa1'], array['{}', null]::jsonb[])$$,
                 'AS002', null, 'a NULL payload');
select throws_ok($$select ai.enqueue_jobs(array['qa1'], array['{}']::jsonb[], max_attempts => 0)$$,
                 'AS002', 'max_attempts must be at least 1, not 0', 'max_attempts below 1');
reset role;
select is((select count(*)::int from ai.agent_jobs), 0, 'nothing was written');

select * from finish();
rollback;

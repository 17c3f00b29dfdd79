\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

-- A worker claims the job of qa1 and checkpoints under its token; its lease expires, another
-- worker claims the job (the token moves on), and the first one, a zombie now, tries again.
set local role app_service;
select (ai.enqueue_job('qa1', '{}', 'fence-test')).job_id as job \gset
select (ai.claim_job('w1', '60 seconds', 'fence-test')).fencing_token as t1 \gset
select lives_ok(format($$select ai.put_checkpoint('qa1', '', 'c1', null, 'test', '\x01', job_id => %s, fencing_token => %s)$$, :job, :t1),
                'the holder of the job checkpoints');
select set_config('ai.frozen_now', '2030-01-01 00:02:00+00', true);
select (ai.claim_job('w2', '60 seconds', 'fence-test')).fencing_token as t2 \gset
select throws_ok(format($$select ai.put_checkpoint('qa1', '', 'c2', 'c1', 'test', '\x02', job_id => %s, fencing_token => %s)$$, :job, :t1),
                 'AS006', null, 'the zombie''s checkpoint is rejected');
select is((select array_agg(checkpoint_id order by checkpoint_id) from ai.checkpoints where thread_id = 'qa1'), array['c1'],
          'and nothing of it is written');
select lives_ok(format($$select ai.put_checkpoint('qa1', '', 'c2', 'c1', 'test', '\x02', job_id => %s, fencing_token => %s)$$, :job, :t2),
                'the new holder checkpoints');

select * from finish();
rollback;

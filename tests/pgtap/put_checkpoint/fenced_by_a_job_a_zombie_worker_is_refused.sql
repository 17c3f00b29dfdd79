\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as id \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute')).fencing_token as token \gset
select ai.act_as('tenant_a');

select is(ai.put_checkpoint('qa1', '', 'c1', null, 'test', '\x01', step_commit => row(:id, :token, null)::ai.step_commit), 'c1',
          'the holder of the job writes a checkpoint');
-- the lease expires, another worker claims the job: the first one is a zombie now
select set_config('ai.frozen_now', '2030-01-01 00:01:00+00', true) is not null as moved \gset
select ai.act_as(null);
select (ai.claim_job('w2', '1 minute')).fencing_token as new_token \gset
select ai.act_as('tenant_a');
select throws_ok(format($$select ai.put_checkpoint('qa1', '', 'c2', 'c1', 'test', '\x01', step_commit => row(%s, %s, null)::ai.step_commit)$$, :id, :token),
                 'AS006', null, 'the zombie''s checkpoint is refused');
select throws_ok(format($$select ai.put_writes('qa1', '', 'c1', 't', array[0], array['ch'], array['t'], array['\x01']::bytea[], '', %s, %s)$$, :id, :token),
                 'AS006', null, 'and so are its writes');
select is(ai.put_checkpoint('qa1', '', 'c2', 'c1', 'test', '\x01', step_commit => row(:id, :new_token, null)::ai.step_commit), 'c2',
          'the new holder''s checkpoint is written');
select is(array(select checkpoint_id from ai.list_checkpoints('qa1', '')), array['c2', 'c1'], 'nothing of the zombie''s');

select * from finish();
rollback;

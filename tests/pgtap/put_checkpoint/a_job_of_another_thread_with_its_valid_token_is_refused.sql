\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/side_effects.sql
-- :job is qa1's job, held under :token. A write to qa2 naming it is not that job's work: the
-- guard every fenced write calls (ai._fence) refuses it (AS002), as the side-effect calls did.
select ai.act_as('tenant_a');
select throws_ok(format($$select ai.put_checkpoint('qa2', '', 'c1', null, 'test', '\x01', step_commit => row(%s, %s, null)::ai.step_commit)$$, :job, :token),
                 'AS002', format('job %s does not advance thread qa2', :job), 'a checkpoint of another thread');
select throws_ok(format($$select ai.put_writes('qa2', '', 'c1', 't', array[0], array['ch'], array['t'], array['\x01']::bytea[], '', %s, %s)$$, :job, :token),
                 'AS002', format('job %s does not advance thread qa2', :job), 'writes of another thread');
select is(ai.put_checkpoint('qa1', '', 'c1', null, 'test', '\x01', step_commit => row(:job, :token, null)::ai.step_commit), 'c1',
          'the job''s own thread is written');
select ai.act_as(null);
reset role;
select is((select count(*)::int from ai.checkpoints where thread_id = 'qa2'), 0, 'nothing written to qa2');
select * from finish();
rollback;

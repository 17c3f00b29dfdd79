\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/side_effects.sql
-- :job is qa1's job, held under :token: a message to qa2 naming it is refused (ai._fence).
select ai.act_as('tenant_a');
select throws_ok(format($$select ai.append_message_idempotent('qa2', 'user', '"x"', job_id => %s, fencing_token => %s)$$, :job, :token),
                 'AS002', format('job %s does not advance thread qa2', :job), 'a message to another thread');
select is((ai.append_message_idempotent('qa1', 'user', '"x"', job_id => :job, fencing_token => :token)).inserted, true,
          'the job''s own thread is written');
select ai.act_as(null);
reset role;
select is((select count(*)::int from ai.session_messages where thread_id = 'qa2'), 0, 'nothing written to qa2');
select * from finish();
rollback;

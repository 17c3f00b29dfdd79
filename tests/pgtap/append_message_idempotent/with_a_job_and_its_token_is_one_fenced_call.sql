\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

-- job_id + fencing_token: ai.fenced_write inside the append, so a worker's fenced append is one
-- statement (its commit check queued once per transaction, as fenced_write's).
select throws_ok(format($$select ai.append_message_idempotent('qa1', 'assistant', '"zombie"', job_id => %s, fencing_token => %s)$$, :id, :token + 1),
                 'AS006', null, 'a stale token is refused');
select throws_ok(format($$select ai.append_message_idempotent('qa1', 'assistant', '"half"', job_id => %s)$$, :id),
                 'AS002', null, 'job_id without fencing_token is refused');
select is((ai.append_message_idempotent('qa1', 'assistant', '"held"', job_id => :id, fencing_token => :token)).inserted,
          true, 'the holder appends');
reset role;
select is((select array_agg(content::text order by seq) from ai.session_messages where thread_id = 'qa1'),
          array['"held"'], 'only the holder''s message');

select * from finish();
rollback;

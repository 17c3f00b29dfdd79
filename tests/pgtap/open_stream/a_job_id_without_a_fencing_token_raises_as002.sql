\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/side_effects.sql
select plan(1);
-- The rule every fenced write shares (ai._check_job_token): a job id without its token is refused
-- before anything is read or written, with one SQLSTATE and one message whichever call it is.
set local role tenant_a;
select throws_ok(format($$select ai.open_stream('qa1', 's-1', 'assistant', null, %s, null)$$, :job), 'AS002',
                 'fencing_token must not be NULL when job_id is given', 'a job id without a fencing token');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(2);

create function pg_temp.plan_of(query text) returns text language plpgsql as $$
declare
  line text;
  plan text := '';
begin
  for line in execute 'explain ' || query loop
    plan := plan || line || E'\n';
  end loop;
  return plan;
end
$$;

-- list_checkpoints' filter across threads (thread_id NULL), as its query has it
set local enable_seqscan = off;
select ok(pg_temp.plan_of($$select * from ai.checkpoints c where c.metadata @> '{"run_id": "r1"}' order by c.checkpoint_id desc$$)
          like '%checkpoints_metadata%', 'a metadata filter is served by the GIN index, not a sequential scan');
-- delete_for_runs finds a run's checkpoints the same way
select ok(pg_temp.plan_of($$select * from ai.checkpoints c where c.metadata @> jsonb_build_object('run_id', 'r1')$$)
          like '%checkpoints_metadata%', 'so is the run_id lookup of delete_for_runs');

select * from finish();
rollback;

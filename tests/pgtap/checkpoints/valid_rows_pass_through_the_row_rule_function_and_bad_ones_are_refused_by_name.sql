\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(2);

-- The row CHECK of ai.checkpoints is one call of ai._check_checkpoint_row (no plain expression in front:
-- measured cheaper on this table, docs/benchmarks.md): the rows put_checkpoint writes pass through it; a bad row still gets the message that names its rule.
set local track_functions = 'pl';
set local role tenant_a;
select pg_temp.chain('vc1', 3) is not null as chained \gset
reset role;
select ok(coalesce(pg_stat_get_xact_function_calls('ai._check_checkpoint_row(jsonb, jsonb)'::regprocedure), 0) > 0,
          'the valid rows written went through the row-rule function, which let them pass');

select throws_ok($$update ai.checkpoints set metadata = '[]' where thread_id = 'vc1'$$,
                 '23514', 'a checkpoint''s metadata and channel_versions are JSON objects',
                 'metadata that is not an object is refused by name');

select * from finish();
rollback;

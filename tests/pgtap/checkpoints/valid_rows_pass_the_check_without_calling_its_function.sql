\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(2);

-- The row CHECK of ai.checkpoints calls ai._check_checkpoint_row only for a row that breaks a
-- rule: put_checkpoint never calls it; a bad row still gets the message that names its rule.
set local track_functions = 'pl';
set local role tenant_a;
select pg_temp.chain('vc1', 3) is not null as chained \gset
reset role;
select is(coalesce(pg_stat_get_xact_function_calls('ai._check_checkpoint_row(jsonb, jsonb)'::regprocedure), 0),
          0::bigint, 'three puts wrote valid rows and called no check function');

select throws_ok($$update ai.checkpoints set metadata = '[]' where thread_id = 'vc1'$$,
                 '23514', 'a checkpoint''s metadata and channel_versions are JSON objects',
                 'metadata that is not an object is refused by name');

select * from finish();
rollback;

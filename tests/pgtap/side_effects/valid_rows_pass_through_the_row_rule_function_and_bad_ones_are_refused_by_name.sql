\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/side_effects.sql

-- The row CHECK of ai.side_effects is one call of ai._check_side_effect_row (no plain expression in front:
-- measured cheaper on this table, docs/benchmarks.md): a begin and a finish pass through it; a bad row still gets the message that names its rule.
reset role;
set local track_functions = 'pl';
set local role app_service;
select outcome as began from ai.begin_side_effect('qa1', 'k1', '{}', :job, :token) \gset
select (ai.finish_side_effect('qa1', 'k1', '{"id": 1}', :job, :token)).status as finished \gset
reset role;
select ok(coalesce(pg_stat_get_xact_function_calls('ai._check_side_effect_row(text, text, integer, integer, timestamptz)'::regprocedure), 0) > 0,
          'the valid rows written went through the row-rule function, which let them pass');

select throws_ok($$update ai.side_effects set finished_at = null where thread_id = 'qa1' and idempotency_key = 'k1'$$,
                 '23514', 'a done side effect has finished_at', 'a done side effect without finished_at is refused by name');
select throws_ok($$update ai.side_effects set attempt = 0 where thread_id = 'qa1' and idempotency_key = 'k1'$$,
                 '23514', 'attempt must be 1 or more and takeovers 0 or more, not 0 and 0', 'attempt 0 is refused by name');
select throws_ok($$update ai.side_effects set status = 'lost' where thread_id = 'qa1' and idempotency_key = 'k1'$$,
                 '23514', 'side effect status ''lost'' is not reserved, done or abandoned', 'an unknown status is refused by name');

select * from finish();
rollback;

\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/side_effects.sql

-- The row CHECK of ai.human_approvals is one call of ai._check_approval_row (no plain expression in front:
-- measured cheaper on this table, docs/benchmarks.md): a request and a resolve pass through it; a bad row still gets the message that names its rule.
reset role;
set local track_functions = 'pl';
set local role app_service;
select ai.request_human(:job, :token, 'c1') as approval \gset
set local role tenant_a;
select (ai.resolve_human('qa1', 'c1', '{"ok": true}')).status = 'resolved' as resolved \gset
reset role;
select ok(coalesce(pg_stat_get_xact_function_calls('ai._check_approval_row(text, text, jsonb, timestamptz)'::regprocedure), 0) > 0,
          'the valid rows written went through the row-rule function, which let them pass');

select throws_ok(format($$update ai.human_approvals set decision = null where approval_id = %L$$, :'approval'),
                 '23514', 'a resolved approval has a decision and decided_at', 'a resolved approval without a decision is refused by name');
select throws_ok(format($$update ai.human_approvals set status = 'cancelled' where approval_id = %L$$, :'approval'),
                 '23514', 'a cancelled approval has decided_at and no decision', 'a cancelled approval with a decision is refused by name');
select throws_ok(format($$update ai.human_approvals set status = 'maybe' where approval_id = %L$$, :'approval'),
                 '23514', 'approval status ''maybe'' is not pending, resolved or cancelled', 'an unknown status is refused by name');

select * from finish();
rollback;

-- Verify agent-state:side_effects_functions on pg

begin;

select 'ai.idempotency_key(text[])'::regprocedure;
select 'ai._check_side_effect_args(text, text, bigint, bigint, boolean)'::regprocedure;
select 'ai._side_effect_holder_alive(ai.side_effects, timestamptz)'::regprocedure;
select 'ai.begin_side_effect(text, text, jsonb, bigint, bigint, interval)'::regprocedure;
select 1 / (p.prorettype = 'ai.side_effect_begin'::regtype and not p.proretset)::int from pg_proc p
 where p.oid = 'ai.begin_side_effect(text, text, jsonb, bigint, bigint, interval)'::regprocedure;
select 'ai.finish_side_effect(text, text, jsonb, bigint, bigint)'::regprocedure;
select 'ai.abandon_side_effect(text, text, bigint, bigint, text)'::regprocedure;
select 'ai.get_side_effect(text, text)'::regprocedure;

rollback;

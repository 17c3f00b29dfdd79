-- Revert agent-state:side_effects_functions from pg

begin;

drop function ai.get_side_effect(text, text);
drop function ai.abandon_side_effect(text, text, bigint, bigint, text);
drop function ai.finish_side_effect(text, text, jsonb, bigint, bigint);
drop function ai.begin_side_effect(text, text, jsonb, bigint, bigint, interval);
drop function ai._side_effect_holder_alive(ai.side_effects, timestamptz);
drop function ai._fence_side_effect(text, bigint, bigint);
drop function ai._check_side_effect_args(text, text, bigint, bigint, boolean);
drop function ai._check_job_token(bigint, bigint);
drop function ai.idempotency_key(text[]);

commit;

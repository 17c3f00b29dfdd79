-- Verify agent-state:owners on pg
-- The functions exist. They are not called: the deploying role may be one that cannot log in (a
-- superuser's deploy runs as the NOLOGIN owner agent_state_owner it makes, scripts/sqitch.sh
-- --as-owner), and ai.current_owner() refuses such a role as no owner identity (AS008).
select 'ai.current_owner()'::regprocedure, 'ai.sees_all_owners()'::regprocedure,
       'ai.act_as(text, boolean)'::regprocedure, 'ai.calling_role()'::regprocedure;

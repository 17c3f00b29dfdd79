-- Verify agent-state:owners on pg
select ai.current_owner(), ai.sees_all_owners();
select 'ai.act_as(text, boolean)'::regprocedure, 'ai.calling_role()'::regprocedure;

-- Verify agent-state:session_lifecycle on pg
select 'ai.create_session(text, jsonb)'::regprocedure;
select 'ai._start_session(text, text, jsonb, jsonb)'::regprocedure;
select 'ai.set_session_status(text, text)'::regprocedure;
select 1 / (not ai._session_transition_allowed('completed', 'active'))::int;

-- Verify agent-state:metrics on pg

select metric, labels, value from ai.metrics() where false;

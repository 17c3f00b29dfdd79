-- Verify agent-state:clock on pg
select ai.now();

-- Verify agent-state:checkpoint_step_types on pg

select (row(array['m'], array['1'], array['json'], array['\x01'::bytea], array[null]::text[])::ai.checkpoint_values).channels,
       (row('task', '', array[0], array['m'], array['json'], array['\x01'::bytea])::ai.task_writes).idx,
       (row(1, 2, 'sync')::ai.step_commit).durability;

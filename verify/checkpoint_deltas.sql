-- Verify agent-state:checkpoint_deltas on pg

select base_version from ai.checkpoint_blobs where false;
select base_version from ai_archive.checkpoint_blobs where false;
select ai._msgpack_concat(array['\x9101'::bytea, '\x920203'::bytea]) = '\x93010203'::bytea or 1/0 = 1;
select 1 / count(*) from ai.error_codes where sqlstate = 'AS062';

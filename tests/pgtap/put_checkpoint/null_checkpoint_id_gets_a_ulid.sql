\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(2);
set local role tenant_a;

select matches(pg_temp.put_ckpt('t-ulid', null, null), '^[0-7][0-9A-HJKMNP-TV-Z]{25}$', 'a NULL id becomes a new ULID');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select ok((select checkpoint_id from ai.checkpoints where thread_id = 't-ulid') is not null, 'and is stored under it');
set local role tenant_a;

select * from finish();
rollback;

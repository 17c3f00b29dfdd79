\ir ../fixtures/helpers.sql
begin;
select plan(3);
set local role tenant_a;

select matches(ai.ulid(), '^[0-7][0-9A-HJKMNP-TV-Z]{25}$', 'a ULID is 26 characters of Crockford base32');
-- each ULID below starts from a fresh session state, as in a new session
select set_config('ai.ulid_state', '', true);
select set_config('ai.frozen_now', '2026-01-01 00:00:00+00', true);
create temp table early as select ai.ulid() as id;
select set_config('ai.ulid_state', '', true);  -- a new session would start without state
select set_config('ai.frozen_now', '2026-01-01 00:00:01+00', true);
select ok((select id from early) < ai.ulid(), 'a ULID of a later millisecond sorts after an earlier one');
select is(ai.ulid_time(ai.ulid()), '2026-01-01 00:00:01+00'::timestamptz, 'it encodes the time of ai.now()');

select * from finish();
rollback;

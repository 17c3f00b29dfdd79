-- Verify agent-state:ulid on pg
select 'ai.ulid()'::regprocedure, 'ai.ulid_time(text)'::regprocedure;
-- 26 characters of Crockford base32 that decode to (about) now.
select 1 / (ai.ulid() ~ '^[0-7][0-9A-HJKMNP-TV-Z]{25}$')::int;
select 1 / (abs(extract(epoch from ai.ulid_time(ai.ulid()) - ai.now())) < 1)::int;

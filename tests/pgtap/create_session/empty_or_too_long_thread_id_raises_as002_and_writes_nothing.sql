\ir ../fixtures/helpers.sql
begin;
select plan(5);

set local role tenant_a;
select throws_ok($$select ai.create_session('')$$, 'AS002', 'thread_id must not be empty', 'empty thread_id');
select throws_ok(format('select ai.create_session(%L)', repeat('t', 256)), 'AS002',
                 'thread_id is longer than 255 characters', 'thread_id of 256 characters');
select lives_ok(format('select ai.create_session(%L)', repeat('t', 255)), '255 characters are fine');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.agent_sessions), 1, 'only the valid session was written');
select is((select count(*)::int from ai.session_events), 1, 'only its start event was written');
set local role tenant_a;

select * from finish();
rollback;

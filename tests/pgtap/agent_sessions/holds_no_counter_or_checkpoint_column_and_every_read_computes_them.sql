\ir ../fixtures/helpers.sql
begin;
select plan(9);

-- Nothing writes a message counter or a current checkpoint on the session row (issue 20), so the
-- table and its archive twin hold neither (issue 33: stored, they read 0 and NULL after appends);
-- every read that returns a session computes both, as ai.session.
select is_empty($$select a.attrelid::regclass, a.attname from pg_attribute a
                  where a.attrelid in ('ai.agent_sessions'::regclass, 'ai_archive.agent_sessions'::regclass)
                    and a.attname in ('last_seq', 'current_checkpoint_id') and not a.attisdropped$$,
                'ai.agent_sessions and its ai_archive twin have no last_seq or current_checkpoint_id');
select is_empty($$select p.oid::regprocedure from pg_proc p
                  where p.pronamespace = 'ai'::regnamespace and p.proname not like '\_%'
                    and p.prorettype = 'ai.agent_sessions'::regtype$$,
                'no public function returns the table''s row type: the reads return ai.session');

set local ai.frozen_now = '2030-01-01 00:00:00+00';
set local role tenant_a;
select ai.create_session('t-dc');
select ai.append_message_idempotent('t-dc', 'user', '"a"');
select ai.append_message_idempotent('t-dc', 'user', '"b"');
select ai.append_message_idempotent('t-dc', 'user', '"c"');
select ai.put_checkpoint('t-dc', '', '01J00000000000000000000001', null, 'json', '\x00'::bytea);
select ai.put_checkpoint('t-dc', 'sub', '01J00000000000000000000009', null, 'json', '\x00'::bytea);

select is(((ai.get_session('t-dc')).last_seq, (ai.get_session('t-dc')).current_checkpoint_id),
          (3::bigint, '01J00000000000000000000001'::text), 'get_session: the newest seq and root checkpoint');
select is((select (s.last_seq, s.current_checkpoint_id) from ai.create_session('t-dc') s),
          (3::bigint, '01J00000000000000000000001'::text), 'create_session again (a retry) returns them too');
select is((select (s.last_seq, s.current_checkpoint_id) from ai.set_session_status('t-dc', 'waiting') s),
          (3::bigint, '01J00000000000000000000001'::text), 'set_session_status returns them');
select is((select (s.last_seq, s.current_checkpoint_id) from ai.list_sessions() s where s.thread_id = 't-dc'),
          (3::bigint, '01J00000000000000000000001'::text), 'list_sessions returns them');
select is((select (s.last_seq, s.current_checkpoint_id) from ai.find_sessions() s where s.thread_id = 't-dc'),
          (3::bigint, '01J00000000000000000000001'::text), 'find_sessions returns them');
select is((select (s.last_seq, s.current_checkpoint_id) from ai.create_session('t-dc-new') s),
          (0::bigint, null::text), 'a new session: last_seq 0, no checkpoint');
reset role;

select is((select string_agg(a.attname, ',' order by a.attnum) from pg_attribute a
           where a.attrelid = (select typrelid from pg_type where oid = 'ai.session'::regtype)
             and a.attnum > 0 and not a.attisdropped),
          'thread_id,owner,status,config,current_checkpoint_id,last_seq,created_at,updated_at,completed_at',
          'ai.session has the columns a 0.1.0 reader of the table got, in their order');

select * from finish();
rollback;

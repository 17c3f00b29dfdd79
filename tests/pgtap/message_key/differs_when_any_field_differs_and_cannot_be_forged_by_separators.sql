\ir ../fixtures/helpers.sql
begin;
select plan(6);

set local role tenant_a;
select isnt(ai.message_key('t1', 'user', '"x"', 1), ai.message_key('t2', 'user', '"x"', 1), 'thread matters');
select isnt(ai.message_key('t', 'user', '"x"', 1), ai.message_key('t', 'assistant', '"x"', 1), 'role matters');
select isnt(ai.message_key('t', 'user', '"x"', 1), ai.message_key('t', 'user', '"y"', 1), 'content matters');
select isnt(ai.message_key('t', 'user', '"x"', 1), ai.message_key('t', 'user', '"x"', 2), 'turn matters');
select isnt(ai.message_key('t', 'user', '"x"', 1), ai.message_key('t', 'user', '"x"'), 'a NULL turn differs from turn 1');
select isnt(ai.message_key('a,b', 'user', '"x"'), ai.message_key('a', 'b,user', '"x"'), 'moving text across fields changes the key');

select * from finish();
rollback;

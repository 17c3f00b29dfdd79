\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select throws_ok($$select ai.put_writes('t-big', '', 'c1', 'task', array[0], array['m'], array['json'],
                                        array[decode(repeat('00', 16777217), 'hex')])$$,
                 'AS003', 'the value of channel m is 16777217 bytes, over the limit of 16777216', 'a pending write over 16 MiB');
select throws_ok(format($$select ai.put_writes('t-big', '', 'c1', 'task', array[0], array[%L], array['json'], array['\x01'::bytea])$$,
                        repeat('c', 3000)),
                 'AS002', 'a channel name is longer than 255 bytes', 'a channel name over 255 bytes');
reset role;
select is((select count(*)::int from ai.agent_sessions where thread_id = 't-big'), 0, 'nothing written');

select * from finish();
rollback;

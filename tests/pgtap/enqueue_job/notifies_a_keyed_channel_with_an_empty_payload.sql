\ir ../fixtures/helpers.sql
begin;
select plan(4);

-- LISTEN needs no privilege: what a notification carries is public. The channel is a keyed hash
-- of the queue name that only ai_service can ask for, and the payload is empty.
set local role app_service;
select ai.queue_channel('emails') as ch \gset
select ok(:'ch' ~ '^ai_jobs_[0-9a-f]{32}$', 'a channel named by a hash');
select ok(position('emails' in :'ch') = 0 and :'ch' <> 'ai_jobs_' || left(encode(sha256(convert_to('emails', 'UTF8')), 'hex'), 32),
          'that names no queue and is no plain hash of its name');
select isnt(ai.queue_channel('other'), :'ch', 'one channel per queue');
set local role tenant_a;
select throws_ok($$select ai.queue_channel('emails')$$, '42501', null, 'tenants cannot compute it');

select * from finish();
rollback;

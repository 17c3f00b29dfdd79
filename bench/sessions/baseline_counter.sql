\set t random(1, 64)
\set r random(1, 1000000000)
with next as (
  update bench_base.sessions set last_seq = last_seq + 1 where thread_id = 'bench-' || :t returning thread_id, last_seq
)
insert into bench_base.messages (thread_id, seq, role, content, idempotency_key)
select thread_id, last_seq, 'user', '{"text": "a user message of a realistic length, about one hundred bytes long......", "r": :r}', md5(random()::text)
from next returning seq;

\set t random(1, 64)
\set r random(1, 1000000000)
insert into bench_base.bare (thread_id, content) values ('bench-' || :t, '{"text": "a user message of a realistic length, about one hundred bytes long......", "r": :r}') returning id;

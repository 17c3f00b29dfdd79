\set t random(1, 64)
\set r random(1, 1000000000)
select seq from ai.append_message_idempotent(':prefix' || :t, 'user', '{"text": "a user message of a realistic length, about one hundred bytes long......", "r": :r}');

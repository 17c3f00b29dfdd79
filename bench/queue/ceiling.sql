\set id random(1, 1000)
update bench_queue.counter set n = n + 1 where id = :id;

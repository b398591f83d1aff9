-- Ceiling: two durable single-row commits per loop (the claim + complete shape).
INSERT INTO bench_commit (client) VALUES (:client_id);
INSERT INTO bench_commit (client) VALUES (:client_id);

-- Ceiling: one durable single-row commit per loop.
INSERT INTO bench_commit (client) VALUES (:client_id);

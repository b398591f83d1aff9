-- Tables of the benchmark (run once per throwaway cluster).
CREATE EXTENSION IF NOT EXISTS claimqueue;
SELECT create_queue('bench', if_not_exists => true);

-- Commit-rate ceilings: one durable single-row INSERT per commit.
CREATE TABLE bench_commit (
    client int NOT NULL,
    at     timestamptz NOT NULL DEFAULT now()
);

-- The classic hand-written SKIP LOCKED queue (the plain-SQL baseline).
CREATE TABLE bench_plain (
    id          bigserial PRIMARY KEY,
    status      text NOT NULL DEFAULT 'ready',
    payload     jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    claimed_at  timestamptz,
    finished_at timestamptz,
    worker      text
);
CREATE INDEX bench_plain_ready_idx ON bench_plain (id) WHERE status = 'ready';

-- The row-write floor: a table with claimqueue.jobs's columns, defaults,
-- CHECK constraints and indexes (no triggers), whose rows the floor scripts
-- take through the two versions a finished job's row must get (running, then
-- done) by primary key: no search, no lock, no API call. What those writes
-- cost bounds what any claim and completion on this schema can reach.
CREATE TABLE bench_floor (LIKE claimqueue.jobs INCLUDING ALL);
-- The next row of the drain floor, and the first of the next 100 of the batch floor.
CREATE SEQUENCE bench_floor_next;
CREATE SEQUENCE bench_floor_batch INCREMENT BY 100;

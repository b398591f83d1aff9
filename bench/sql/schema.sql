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

-- claimqueue producer (held-snapshot probe): one job per transaction.
SELECT enqueue('bench', '{"n": 1}');

-- Plain-SQL producer (held-snapshot probe): one row per transaction.
INSERT INTO bench_plain (payload) VALUES ('{"n": 1}');

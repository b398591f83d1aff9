# Without claimqueue in shared_preload_libraries: CREATE EXTENSION works and
# warns with a hint; the queue works; nothing runs in the background, so
# reap() and purge() do the passes by hand and reaper_stats says why; and
# dequeue_wait() claims but cannot wait (no shared memory for waiters).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');

# psql's output and messages (without psql's "psql:<stdin>:N: " prefix).
sub run_sql
{
	my ($sql) = @_;
	my ($ret, $stdout, $stderr) = $node->psql('app', $sql);
	$stderr =~ s/^psql:<stdin>:\d+: //mg;
	return ($stdout, $stderr);
}

my $not_preloaded = q{WARNING:  claimqueue is not in shared_preload_libraries
DETAIL:  claimqueue's reaper, a background worker, runs only when the library is preloaded: until then, jobs whose lease expired come back only when reap() is called, and finished jobs are deleted only by purge().
HINT:  Add claimqueue to shared_preload_libraries in postgresql.conf and restart the server.};

# The warning comes with CREATE EXTENSION, and with the check the library makes.
my ($out, $err) = run_sql('CREATE EXTENSION claimqueue');
is($err, $not_preloaded, 'CREATE EXTENSION works and warns, with a detail and a hint');
($out, $err) = run_sql('SELECT claimqueue.check_preload()');
is($out, 'f', 'check_preload() says not preloaded');
is($err, $not_preloaded, '... with the same warning');

# The queue works; reap() returns an expired lease by hand (the session's
# clock is moved past the lease instead of sleeping through it).
is($node->safe_psql('app', q{SELECT enqueue('default', '{"n": 1}')}), '1', 'enqueue works');
is($node->safe_psql('app', q{SELECT id, attempt FROM dequeue('default', 'w1', lease => '1 second')}),
	'1|1', 'dequeue claims it');
is($node->safe_psql('app', q{SET claimqueue.debug_clock_offset = '1min'; SELECT reap()}),
	'1', 'reap() returns the expired lease');
is($node->safe_psql('app', 'SELECT state, last_error FROM queue_jobs'),
	'ready|lease expired (worker w1, attempt 1)', '... to ready, with the lease error');

# Nothing reaps in the background; purge() does the retention pass by hand.
is($node->safe_psql('app', 'SELECT preloaded, state, pid FROM reaper_stats'),
	'f|not preloaded|', 'reaper_stats says not preloaded, with no pid');
is($node->safe_psql('app', 'SELECT count(*) FROM all_reaper_stats'), '0',
	'all_reaper_stats has no row: no launcher keeps slots');
is($node->safe_psql('app', q{SET claimqueue.debug_clock_offset = '2min';
	SELECT id, attempt FROM dequeue('default', 'w1')}), '1|2', 'the returned job is claimed again (attempt 2)');
is($node->safe_psql('app', 'SELECT complete(1, 2)'), '', '... and completed');
is($node->safe_psql('app', q{SET claimqueue.debug_clock_offset = '8d'; SELECT purge()}),
	'1', 'purge() deletes it once its retention has passed');
is($node->safe_psql('app', 'SELECT count(*) FROM queue_jobs'), '0', '... leaving no job');

# dequeue_wait() claims without the preload, but cannot wait: nothing to
# register waiters in. The error says so, with a hint.
$node->safe_psql('app', q{SELECT enqueue('default', '{"n": 2}')});
is($node->safe_psql('app', q{CALL dequeue_wait('default', 'w1', wait => '0') \gset
SELECT jsonb_path_query_array(:'jobs', '$[*].id')}), '[2]', q{dequeue_wait(wait => '0') claims});
($out, $err) = run_sql(q{CALL dequeue_wait('default', 'w1', wait => '1s')});
is($err, q{ERROR:  dequeue_wait() cannot wait on queue "default": claimqueue is not in shared_preload_libraries
DETAIL:  Waiters are registered in shared memory, which exists only when the library is preloaded.
HINT:  Add claimqueue to shared_preload_libraries and restart the server, or pass wait => '0' and poll with dequeue().},
	'a wait is refused, naming the preload, with a hint');

# A claim that would die with its session needs the owners' list in shared
# memory: refused with 55000 and a hint, and the job stays ready.
$node->safe_psql('app', q{SELECT enqueue('default', '{"n": 3}')});
($out, $err) = run_sql(q{SELECT id FROM dequeue('default', 'w1', release_on_disconnect => true)});
is($err, q{ERROR:  release_on_disconnect needs claimqueue in shared_preload_libraries
DETAIL:  The sessions that hold such claims are listed in shared memory, which exists only when the library is preloaded.
HINT:  Add claimqueue to shared_preload_libraries and restart the server, or claim without release_on_disconnect.},
	'release_on_disconnect is refused, naming the preload, with a hint');
is($node->safe_psql('app', q{SELECT state, attempt FROM claimqueue.jobs WHERE id = 3}), 'ready|0',
	'... and the job is still ready, untouched');
is($node->safe_psql('app', q{SELECT id FROM dequeue('default', 'w1')}), '3', '... a plain claim takes it');

# A fair queue without the preload: no cursors and no shared rotation, but its
# claims still rotate across tenants (each session keeps its own place), take
# priority first, and reach the jobs without a key as one tenant more.
$node->safe_psql('app', q{
	SELECT create_queue('fair', fair => true);
	SELECT enqueue_batch('fair', array_fill('{}'::jsonb, ARRAY[5]), concurrency_key => 'a');
	SELECT enqueue_batch('fair', array_fill('{}'::jsonb, ARRAY[2]), concurrency_key => 'b');
	SELECT enqueue('fair', '{}');
	SELECT enqueue('fair', '{}', concurrency_key => 'b', priority => 9);
});
is($node->safe_psql('app', q{
	SELECT string_agg(coalesce(j.concurrency_key, '-') || j.priority, ' ' ORDER BY d.n)
	  FROM dequeue('fair', 'w1', batch => 20) WITH ORDINALITY
	       d(id, payload, attempt, max_attempts, priority, lease_expires_at, created_at, n)
	  JOIN claimqueue.jobs j USING (id)}),
	'b9 a0 -0 b0 a0 b0 a0 a0 a0',
	'a fair queue rotates across tenants without the preload, priority first (tenants in their hash order, b then a, then the jobs without a key)');
is($node->safe_psql('app', q{SELECT count(*) FROM claimqueue.jobs j JOIN claimqueue.queues q USING (queue_id)
	WHERE q.name = 'fair' AND (j.state <> 'running' OR j.attempt <> 1)}), '0',
	'... every job claimed once');

done_testing();

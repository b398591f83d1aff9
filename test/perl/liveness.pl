# Liveness soak: claims never stop while jobs are ready. The workload that
# stopped claimqueue 0.3.0 for good in 4 of 5 runs (a claim-cursor bound read
# a shared slot twice, so a slot released between the two reads moved a cursor
# to "no position", past every job): a prefilled backlog, 2 producers
# enqueuing in autocommit, 8 consumers claiming and completing (pgbench), and
# a session holding a REPEATABLE READ snapshot for the whole run. Every window
# must complete at least one job while jobs are ready (not a speed test: a
# window fails only at zero); at the end the claim cursors' invariants hold.
#   LIVENESS_SECONDS   how long the producers and consumers run (default 150)
#   LIVENESS_BACKLOG   jobs prefilled, in statements of 50,000 (default 200000)
#   LIVENESS_WINDOW    seconds per window (default 10)
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $seconds = $ENV{LIVENESS_SECONDS} // 150;
my $backlog = $ENV{LIVENESS_BACKLOG} // 200000;
my $window  = $ENV{LIVENESS_WINDOW}  // 10;

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'claimqueue'
max_connections = 50
});
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');
sub app { return $node->safe_psql('app', $_[0]); }
app('SET client_min_messages = warning; CREATE EXTENSION claimqueue');
for (my $first = 1; $first <= $backlog; $first += 50000)
{
	my $last = $first + 49999 < $backlog ? $first + 49999 : $backlog;
	app("SELECT count(enqueue('default', jsonb_build_object('kind', 'noop', 'seq', g,
		'pad', repeat('x', 64)))) FROM generate_series($first, $last) AS g");
}
note 'prefilled ' . app(q{SELECT count(*) FROM claimqueue.jobs WHERE state = 'ready'}) . ' jobs';

# The snapshot holder: an xid and a REPEATABLE READ snapshot for the whole run.
my $holder = $node->background_psql('app');
$holder->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT txid_current();
	SELECT count(*) FROM claimqueue.jobs');

# pgbench in the background: CLIENTS sessions running SCRIPT for the run.
my $dir = PostgreSQL::Test::Utils::tempdir();
sub pgbench
{
	my ($name, $clients, $threads, $script) = @_;
	append_to_file("$dir/$name.sql", $script);
	my $output = '';
	my $run = IPC::Run::start(
		[ 'pgbench', '-n', '-c', $clients, '-j', $threads, '-T', $seconds, '-f', "$dir/$name.sql",
		  '-h', $node->host, '-p', $node->port, 'app' ],
		'>', \$output, '2>&1');
	return sub { $run->finish; return $output; };
}
my $pad = 'x' x 64;
my $producers = pgbench('produce', 2, 1,
	qq{SELECT enqueue('default', '{"kind": "noop", "pad": "$pad"}');\n});
my $consumers = pgbench('consume', 8, 2, q{
SELECT coalesce(max(id), 0) AS id, coalesce(max(attempt), 0) AS attempt
FROM dequeue('default', 'w' || :client_id) \gset
\if :id
SELECT complete(:id, :attempt);
\else
\sleep 10 ms
\endif
});

# Windows of WINDOW seconds: done and ready counts read at each boundary
# (without SKIP LOCKED). The sleep is the window itself, not a wait for
# something to happen.
my $counts = q{SELECT count(*) FILTER (WHERE state = 'done'), count(*) FILTER (WHERE state = 'ready')
               FROM claimqueue.jobs};
my ($done_before, $ready_before) = split /\|/, app($counts);
my ($windows, $stalled) = (0, 0);
my $end = time + $seconds - $window;
while (time < $end)
{
	sleep $window;
	my ($done, $ready) = split /\|/, app($counts);
	$windows++;
	note "window $windows: " . ($done - $done_before) . " jobs done, $ready ready";
	if ($done == $done_before && $ready_before > 0)
	{
		$stalled++;
		note "window $windows claimed nothing with $ready_before jobs ready; lanes:\n"
		  . app('SELECT queue_id, priority, cursor, max_position FROM claimqueue.claim_cursors()');
	}
	($done_before, $ready_before) = ($done, $ready);
}
my $produced = $producers->();
my $consumed = $consumers->();
note "producers: $produced\nconsumers: $consumed";
$holder->quit;

is($stalled, 0, "every one of $windows windows of ${window}s completed jobs while jobs were ready");
like($produced, qr/number of failed transactions: 0\b/, 'the producers ran without errors');
like($consumed, qr/number of failed transactions: 0\b/, 'the consumers ran without errors');
is(app(q{SELECT format('%s/%s cursor %s: %s', queue_id, priority, cursor, problem)
	FROM claimqueue.check_claim_cursors()}), '', "the claim cursors' invariants hold");
is(app('SELECT count(*) FROM claimqueue.claim_cursors() WHERE cursor < 0'), '0',
	'no cursor reads as -1 (no position)');
# Nothing is held back once the run is over: a claim takes as many jobs as
# are ready, up to its batch.
my $ready = app(q{SELECT least(count(*), 1000) FROM claimqueue.jobs WHERE state = 'ready'});
is(app(q{SELECT count(*) FROM dequeue('default', 'after', 1000)}), $ready,
	"after the run a claim of 1000 takes min(1000, ready) = $ready jobs");

done_testing();

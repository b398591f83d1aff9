# A release without downtime: this library serves a database still at the
# previous release (schema_version.hpp). The database is installed from that
# release's frozen install script while this library is preloaded, runs the
# previous release's whole API (its signatures only), its reaper returns an
# expired lease, the server restarts (the step onto a new library), work goes
# on, then ALTER EXTENSION claimqueue UPDATE commits while other sessions are
# mid-way (a warm session with a claim in hand, an open transaction, a waiting
# dequeue_wait): each goes on without an error, and the current API works,
# the new version's features included (release_on_disconnect).
# Every job is counted at the end. Versions older than the previous release
# stay refused. Every wait polls with a deadline.
#
# What this does not run: the previous release's own library. The restart
# goes from this library to itself; what a rolling restart changes, the
# library under a database that stays at the previous version, is covered by
# the database having been created and used at that version under this one.
use strict;
use warnings;
use FindBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('rolling');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'claimqueue'
claimqueue.reaper_interval = '200ms'
log_line_prefix = '%m [%p] %e %q%a '
});
$node->start;

# The released versions' full scripts: an extension directory with them and
# the installed claimqueue (test/lib/released.sh), named by the sessions that
# create an old version.
my ($released) = do {
	local $ENV{PGHOST} = $node->host;
	local $ENV{PGPORT} = $node->port;
	local $ENV{TMPDIR} = PostgreSQL::Test::Utils::tempdir();
	run_command([ 'bash', '-c', 'source "$0" && released_extension_dir', "$FindBin::RealBin/../lib/released.sh" ]);
};
my ($sharedir) = run_command([ 'pg_config', '--sharedir' ]);
chomp $sharedir;
my $use_released = $node->safe_psql('postgres', 'SHOW server_version_num') >= 180000
  ? "SET extension_control_path = '$released$sharedir:\$system'"
  : "SET extension_destdir = '$released'";

# The current version and the previous release, as the build knows them: the
# control file's default_version, and the newest release with an upgrade
# script straight to it (src/sql/updates' last part, the version the library
# serves besides its own).
my $extdir = "$released$sharedir/extension";
my ($current) = slurp_file("$extdir/claimqueue.control") =~ /^default_version\s*=\s*'([^']+)'/m;
my @from = sort { version_cmp($a, $b) } map { m{claimqueue--([^-]+)--\Q$current\E\.sql$} ? $1 : () }
  glob("$extdir/claimqueue--*--$current.sql");
my $previous = $from[-1];
my $older = $from[-2];
sub version_cmp
{
	my @a = split /\./, $_[0];
	my @b = split /\./, $_[1];
	for my $i (0 .. 2) { my $c = ($a[$i] // 0) <=> ($b[$i] // 0); return $c if $c; }
	return 0;
}
# This suite calls the previous release's API by its signatures: when a new
# version opens (src/sql/README.md, "A new version"), the previous release is
# the one just released, and this suite is brought to its API.
is($previous, '0.4.0', "the previous release of $current is 0.4.0, whose API this suite calls");

# --- a version older than the previous release stays refused
$node->safe_psql('postgres', 'CREATE DATABASE older');
$node->safe_psql('older', "$use_released; SET client_min_messages = error;
	CREATE EXTENSION claimqueue VERSION '$older'");
my ($ret, $out, $err) = $node->psql('older', q{SET log_min_messages = fatal; SELECT enqueue('default', '{}')});
like($err, qr/ERROR:  claimqueue's library is version \Q$current\E, but this database has the extension at version \Q$older\E/,
	"a database at $older (older than $previous) is refused");
like($err, qr/DETAIL:  This library serves databases at version \Q$current\E or \Q$previous\E\./,
	'naming the versions the library serves');
like($err, qr/HINT:  Run ALTER EXTENSION claimqueue UPDATE in this database\./, 'with the hint to update');
$node->safe_psql('postgres', 'DROP DATABASE older');

# --- a database at the previous release, under this library
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', "$use_released; SET client_min_messages = error;
	CREATE EXTENSION claimqueue VERSION '$previous'");
sub app { return $node->safe_psql('app', $_[0]); }
is(app(q{SELECT extversion FROM pg_extension WHERE extname = 'claimqueue'}), $previous,
	"the database is at $previous");

# Every job this suite enqueues by hand, by id: counted at the end.
my %enqueued;
# Takes what an enqueue printed, returns the ids (one a line).
sub enqueued
{
	my @ids = grep { /^\d+$/ } split /\n/, $_[0];
	$enqueued{$_} = 1 for @ids;
	return join("\n", @ids);
}

my $reaper = "FROM pg_stat_activity WHERE backend_type = 'claimqueue reaper' AND datname = 'app'";
ok($node->poll_query_until('postgres', "SELECT count(*) $reaper", '1'),
	"a database at $previous gets a reaper");
ok($node->poll_query_until('app', 'SELECT state FROM reaper_stats', 'running'), 'reaper_stats says running');

# Queue administration.
app(q{SELECT create_queue('work', lease => '5 minutes', max_attempts => 3, retention => '1 day',
	                      failed_retention => '2 days');
	SELECT create_queue('work', if_not_exists => true);
	SELECT alter_queue('work', backoff_base => '2 seconds', backoff_cap => '1 minute');
	SELECT create_queue('spare'); SELECT create_queue('bulk');
	SELECT create_queue('ticks'); SELECT create_queue('wake')});
is(app(q{SELECT lease || ' ' || max_attempts || ' ' || backoff_base || ' ' || failed_retention
	FROM queue_settings WHERE queue = 'work'}), '00:05:00 3 00:00:02 2 days',
	'create_queue and alter_queue (queue_settings)');
is(app(q{SELECT drop_queue('spare')}), '0', 'drop_queue');
is(app(q{SELECT pause_queue('work')}), 't', 'pause_queue');
enqueued(app(q{SELECT enqueue('work', '{"n": 1}')}));
is(app(q{SELECT count(*) FROM dequeue('work', 'w')}), '0', 'a paused queue claims nothing');
is(app(q{SELECT resume_queue('work')}), 't', 'resume_queue');

# Grants.
app(q{CREATE ROLE worker_role LOGIN IN ROLE claimqueue_consumer});
is(app(q{SELECT grant_queue('work', 'consume', 'worker_role')}), 't', 'grant_queue');
is(app(q{SELECT count(*) FROM queue_privileges WHERE queue = 'work' AND grantee = 'worker_role'}), '1',
	'queue_privileges shows it');

# Enqueue: one at a time (priority, delay, dedup key), in a batch.
enqueued(app(q{SELECT enqueue('work', '{"n": 2}', priority => 5)}));
enqueued(app(q{SELECT enqueue('work', '{"n": 3}', run_at => now() + interval '1 hour')}));
my $dedup = enqueued(app(q{SELECT enqueue('work', '{"n": 4}', dedup_key => 'once')}));
is(app(q{SELECT enqueue('work', '{"n": 4}', dedup_key => 'once')}), $dedup,
	'a dedup_key enqueues once');
enqueued(app(q{SELECT enqueue_batch('work', ARRAY['{"n": 5}', '{"n": 6}', '{"n": 7}', '{"n": 8}']::jsonb[])}));
is(scalar(keys %enqueued), 8, 'enqueue and enqueue_batch');
is(app(q{SELECT next_due('work') <= now()}), 't', 'next_due');

# Claim and finish: dequeue, heartbeat, complete, complete_batch,
# complete_and_dequeue, fail.
my @claim = split /\|/, app(q{SELECT id || '|' || attempt FROM dequeue('work', 'w1')});
is(app(qq{SELECT payload->>'n' FROM claimqueue.jobs WHERE id = $claim[0]}), '2', 'dequeue takes the first by priority');
is(app(qq{SELECT heartbeat($claim[0], $claim[1], extend => '10 minutes') > now()}), 't', 'heartbeat');
app(qq{SELECT complete($claim[0], $claim[1], '{"ok": 1}')});
my @two = split /\n/, app(q{SELECT id || ',' || attempt FROM dequeue('work', 'w1', 2)});
my ($ids, $attempts) = (join(',', map { (split /,/)[0] } @two), join(',', map { (split /,/)[1] } @two));
app(qq{SELECT complete_batch('{$ids}', '{$attempts}', ARRAY['{"ok": 2}', '{"ok": 3}']::jsonb[])});
@claim = split /\|/, app(q{SELECT id || '|' || attempt FROM dequeue('work', 'w1')});
my @next = split /\|/, app(qq{SELECT id || '|' || attempt FROM complete_and_dequeue($claim[0], $claim[1], 'work', 'w1')});
is(scalar(@next), 2, 'complete_and_dequeue completes one and claims the next');
is(app(qq{SELECT fail($next[0], $next[1], 'boom', retry_in => '0')}), 'ready', 'fail (retried)');
is(app(q{SELECT count(*) FROM queue_jobs WHERE queue = 'work' AND state = 'done'}), '4',
	'four jobs done');
is(app(qq{SELECT state || ' ' || attempt || ' ' || last_error FROM job_status(ARRAY[$next[0]])}), 'ready 1 boom',
	'job_status');
like(app(qq{CALL await_jobs(ARRAY[$claim[0]], '10 seconds')}), qr/"state": "done"/,
	'await_jobs returns a finished job');
my $waited = app(q{CALL dequeue_wait('work', 'w2', wait => '10 seconds')});
my @waited = ($waited =~ /"id": (\d+)/, $waited =~ /"attempt": (\d+)/);
is(scalar(@waited), 2, 'dequeue_wait claims');

# Retry and cancel, one and in bulk.
my $doomed = enqueued(app(q{SELECT enqueue('bulk', '{}')}));
app(qq{SELECT cancel($doomed)});
app(qq{SELECT retry($doomed)});
is(app(qq{SELECT state FROM job_status(ARRAY[$doomed])}), 'ready', 'cancel, then retry');
enqueued(app(q{SELECT enqueue_batch('bulk', ARRAY['{}', '{}', '{}']::jsonb[])}));
is(app(q{SELECT cancel_jobs('bulk')}), '4', 'cancel_jobs');
is(app(q{SELECT retry_jobs('bulk', '{cancelled}', max_jobs => 2)}), '2', 'retry_jobs');

# Schedules: one job per second, every slot exactly once, through the
# restart and the update below.
is(app(q{SELECT schedule('tick', 'every 1 second', 'ticks', '{"s": 1}', catch_up => 'all') > now() - interval '1 second'}),
	't', 'schedule');
app(q{SELECT schedule('unused', '0 3 * * *', 'ticks'); SELECT unschedule('unused')});
is(app(q{SELECT string_agg(name, ',') FROM schedules}), 'tick', 'unschedule (the view schedules)');
my $ticks = q{FROM claimqueue.jobs WHERE payload->'claimqueue'->>'schedule' = 'tick'};
sub ticks_whole
{
	my ($more, $what) = @_;
	my $before = app("SELECT count(*) $ticks");
	ok($node->poll_query_until('app', "SELECT count(*) >= $before + $more $ticks"), "the schedule fires $what");
	is(app(qq{SELECT count(*) = count(DISTINCT run_at)
			AND count(*) = 1 + extract(epoch FROM max(run_at) - min(run_at)) $ticks}), 't',
		"one job for every slot, $what");
}
ticks_whole(3, "at $previous");
is(app(q{SELECT run_schedules() >= 0}), 't', 'run_schedules');

# The reaper: an expired lease comes back.
# Each in a queue of its own, so that the claim takes this job and no other.
my $leases = 0;
sub abandoned
{
	my $queue = 'lease' . ++$leases;
	my $id = enqueued(app(qq{SELECT create_queue('$queue'); SELECT enqueue('$queue', '{}')}));
	is(app(qq{SELECT id FROM dequeue('$queue', 'doomed', lease => '1 second')}), $id, 'a claim is abandoned');
	return $id;
}
my $job = abandoned();
ok($node->poll_query_until('app', "SELECT state FROM claimqueue.jobs WHERE id = $job", 'ready'),
	"the reaper returns an expired lease at $previous");
is(app(q{SELECT reap() >= 0 AND purge() >= 0}), 't', 'reap and purge by hand');

# Metrics and the other views.
is(app(q{SELECT enqueued >= 8 AND claimed >= 6 FROM queue_metrics WHERE queue = 'work'}), 't', 'queue_metrics');
is(app(q{SELECT claimqueue.recount_queue_metrics() >= 1}), 't', 'recount_queue_metrics');
is(app(q{SELECT ready + scheduled + running + done FROM queue_stats WHERE queue = 'work'}), '8', 'queue_stats');
is(app(q{SELECT count(*) >= 0 FROM claim_cursor_usage}), 't', 'claim_cursor_usage');
is(app(q{SELECT jobs_reaped >= 1 FROM reaper_stats}), 't', 'reaper_stats counts the reaped lease');

# Advisory-lock namespaces.
app(q{SELECT lock_namespace('app_locks', 'registered'); SELECT register_lock_key('app_locks', 'k')});
is(app(q{SELECT try_advisory_xact_lock('app_locks', 'k')}), 't', 'advisory-lock namespaces');

# --- the restart onto the new library
$node->restart;
ok($node->poll_query_until('postgres', "SELECT count(*) $reaper", '1'), 'after the restart the reaper is back');
is(app(q{SELECT extversion FROM pg_extension WHERE extname = 'claimqueue'}), $previous,
	"the database is still at $previous");
enqueued(app(q{SELECT enqueue_batch('work', ARRAY['{"n": 9}', '{"n": 10}', '{"n": 11}']::jsonb[])}));
@claim = split /\|/, app(q{SELECT id || '|' || attempt FROM dequeue('work', 'w3')});
app(qq{SELECT complete($claim[0], $claim[1])});
is(app(qq{SELECT state FROM job_status(ARRAY[$claim[0]])}), 'done', 'enqueue, claim and complete after the restart');
$job = abandoned();
ok($node->poll_query_until('app', "SELECT state FROM claimqueue.jobs WHERE id = $job", 'ready'),
	'the reaper returns an expired lease after the restart');
ticks_whole(3, 'across the restart');

# --- ALTER EXTENSION UPDATE while other sessions are mid-way
# A warm session (its cached schema version, queue cache and the jobs
# table's executor state built at the previous version) holding a claim.
my $warm = $node->background_psql('app');
enqueued($warm->query_safe(q{SELECT enqueue('work', '{"n": 12}')}));
my @held = split /\|/, $warm->query_safe(q{SELECT id || '|' || attempt FROM dequeue('work', 'warm')});
# A transaction that has claimed and not yet committed.
my $tx = $node->background_psql('app');
$tx->query_safe(q{BEGIN});
my @in_tx = split /\|/, $tx->query_safe(q{SELECT id || '|' || attempt FROM dequeue('work', 'tx')});
# A worker asleep in dequeue_wait.
my $waiter = $node->background_psql('app', on_error_stop => 0);
$waiter->query_safe(q{SET application_name = 'waiter'});
$waiter->query_until(qr/started/, "\\echo started\nCALL dequeue_wait('wake', 'waiter', lease => '1 hour', wait => '60s');\n\\echo returned\n");
ok($node->poll_query_until('app', q{SELECT count(*) FROM pg_stat_activity a JOIN claimqueue.waiters() w USING (pid)
	WHERE a.application_name = 'waiter' AND a.wait_event_type = 'Extension'}, '1'), 'a worker waits in dequeue_wait');

# The update, in a session of its own: it may wait for the open transaction's
# locks (its table changes and trigger replacements do), or not.
my $updater = $node->background_psql('app');
$updater->query_safe(q{SET application_name = 'updater'});
$updater->query_until(qr/updating/, "\\echo updating\nALTER EXTENSION claimqueue UPDATE;\n");
$node->poll_query_until('app', q{SELECT count(*) FROM pg_stat_activity WHERE application_name = 'updater'
	AND query LIKE 'ALTER EXTENSION%' AND (state = 'idle' OR wait_event_type = 'Lock')}, '1');
note 'the update ' . (app(q{SELECT wait_event_type FROM pg_stat_activity WHERE application_name = 'updater'})
	eq 'Lock' ? 'waits for the open transaction' : 'did not wait for the open transaction');
# The open transaction commits its claim; then the update is done.
$tx->query_safe(q{COMMIT});
is($updater->query_safe(q{SELECT extversion FROM pg_extension WHERE extname = 'claimqueue'}), $current,
	"ALTER EXTENSION claimqueue UPDATE commits: the database is at $current");
$tx->query_safe(qq{SELECT complete($in_tx[0], $in_tx[1])});
is(app(qq{SELECT state FROM job_status(ARRAY[$in_tx[0]])}), 'done',
	'a claim committed before the update is completed after it, in the same session');

# The warm session goes on: no stale schema version, no stale column map.
my ($result, $failed) = $warm->query(qq{SELECT complete($held[0], $held[1], '{"after": "update"}')});
is($failed, 0, 'the warm session completes the claim it made before the update, without an error');
is(app(qq{SELECT state || ' ' || (result->>'after') FROM claimqueue.jobs WHERE id = $held[0]}), 'done update',
	'with its result');
enqueued($warm->query_safe(q{SELECT enqueue('work', '{"n": 13}')}));
@claim = split /\|/, $warm->query_safe(q{SELECT id || '|' || attempt FROM dequeue('work', 'warm')});
is($warm->query_safe(qq{SELECT fail($claim[0], $claim[1], 'after update', retry_in => '0')}), 'ready',
	'and enqueues, claims and fails after it');
is($warm->query_safe(q{SELECT count(*) FROM queue_stats WHERE queue = 'work'}), '1', 'and reads the views');
$warm->quit;

# The waiter wakes for a job enqueued after the update and claims it.
my $woken = enqueued(app(q{SELECT enqueue('wake', '{"w": 1}')}));
$waiter->{run}->pump while $waiter->{stdout} !~ /^returned$/m && $waiter->{run}->pumpable;
like($waiter->{stdout}, qr/"id": $woken\b/, 'the worker asleep in dequeue_wait across the update claims a job enqueued after it');
is($waiter->{stderr}, '', 'without an error');
$waiter->quit;
$tx->quit;
$updater->quit;

# --- the current version
is(app(q{SELECT count(*) FROM claimqueue.waiters()}), '0', 'no waiter left behind');
ok($node->poll_query_until('postgres', "SELECT count(*) $reaper", '1'), "a reaper at $current");
$job = abandoned();
ok($node->poll_query_until('app', "SELECT state FROM claimqueue.jobs WHERE id = $job", 'ready'),
	'the reaper returns an expired lease after the update');
ticks_whole(3, 'across the update');
# The current API, in a new session.
enqueued(app(q{SELECT enqueue_batch('work', ARRAY['{"n": 14}', '{"n": 15}']::jsonb[])}));
my $drained = app(q{WITH c AS (SELECT id, attempt FROM dequeue('work', 'w4', 100))
	SELECT count(*) FROM c, LATERAL complete(c.id, c.attempt)});
cmp_ok($drained, '>=', 2, "dequeue and complete at $current");
# 0.5.0's claims that die with their session (release_on_disconnect), which
# the previous release does not have: a claim whose session ends comes back.
my $owned = enqueued(app(q{SELECT create_queue('owned'); SELECT enqueue('owned', '{}')}));
my $owner = $node->background_psql('app');
is($owner->query_safe(q{SELECT id FROM dequeue('owned', 'owner', lease => '1 hour', release_on_disconnect => true)}),
	$owned, "a claim with release_on_disconnect at $current");
$owner->quit;
ok($node->poll_query_until('app', "SELECT state || ' ' || (last_error LIKE 'session ended%') FROM claimqueue.jobs WHERE id = $owned",
	'ready true'), 'comes back when its session ends');
app(qq{SELECT complete($waited[0], $waited[1])});
is(app(q{SELECT count(*) FROM queue_jobs WHERE queue = 'work' AND state <> 'done'}), '1',
	'every job of work is done but the one delayed an hour');

# --- nothing lost: every job enqueued by hand is there, and no other
my $ids = join(',', sort { $a <=> $b } keys %enqueued);
is(app(qq{SELECT count(*) FROM claimqueue.jobs WHERE id = ANY('{$ids}')}), scalar(keys %enqueued),
	'every job enqueued is there (' . scalar(keys %enqueued) . ')');
is(app(qq{SELECT count(*) FROM claimqueue.jobs WHERE NOT id = ANY('{$ids}')
	AND payload->'claimqueue'->>'schedule' IS DISTINCT FROM 'tick'}), '0',
	'and every other job is one of the schedule\'s');
is(app(q{SELECT string_agg(state || ' ' || n, ', ' ORDER BY state) FROM
	(SELECT regexp_replace(q.name, '[0-9]+$', '') || ':' || state AS state, count(*) AS n
	 FROM claimqueue.jobs j JOIN claimqueue.queues q USING (queue_id) WHERE q.name <> 'ticks' GROUP BY 1) s}),
	'bulk:cancelled 2, bulk:ready 2, lease:ready 3, owned:ready 1, wake:running 1, work:done 14, work:ready 1',
	'each in the state its calls left it');

$node->stop;
unlike(slurp_file($node->logfile), qr/\b(ERROR|PANIC):/, 'nothing at ERROR in the server log');

done_testing();

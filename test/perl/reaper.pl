# The reaper's lifecycle, end to end: the launcher finds the databases with
# the extension, their reapers return expired leases and purge old jobs; they
# follow databases and extensions that come, go, are copied, renamed and
# updated; they survive SIGTERM, SIGKILL, restarts and an immediate shutdown;
# a standby runs none until it is promoted. Schedules give each slot one job
# through all of it. Every wait polls with a deadline.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use CrashRestart;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('primary');
$node->init(allows_streaming => 1);
# %e: the SQLSTATE of every line, for the failed-pass check.
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'claimqueue'
claimqueue.reaper_interval = '200ms'
max_prepared_transactions = 4
restart_after_crash = on
log_line_prefix = '%m [%p] %e %q%a '
});
$node->start;
sub app { return $node->safe_psql('app', $_[0]); }
$node->safe_psql('postgres', 'CREATE DATABASE app');
app('SET client_min_messages = error; CREATE EXTENSION claimqueue');

my $reaper = "FROM pg_stat_activity WHERE backend_type = 'claimqueue reaper' AND datname";
sub reaper_pid { return $node->safe_psql('postgres', "SELECT pid $reaper = '$_[0]'"); }
sub has_reaper { return $node->poll_query_until('postgres', "SELECT count(*) $reaper = '$_[0]'", '1'); }
sub no_reaper  { return $node->poll_query_until('postgres', "SELECT count(*) $reaper = '$_[0]'", '0'); }
sub gone { return $node->poll_query_until('postgres', "SELECT count(*) FROM pg_stat_activity WHERE pid = $_[0]", '0'); }

# A claimed job with a lease of one second, never completed: its id. Each in
# a queue of its own, so the claim takes this job and no other.
my $queues = 0;
sub abandoned_job
{
	my ($db, $max_attempts) = @_;
	my $queue = 'abandoned_' . ++$queues;
	my @out = split /\n/, $node->safe_psql($db, "SELECT create_queue('$queue');
		SELECT enqueue('$queue', '{}', max_attempts => " . ($max_attempts // 5) . ");
		SELECT id FROM dequeue('$queue', 'doomed-worker', lease => '1 second')");
	return $out[-1];
}
sub becomes
{
	my ($db, $job, $state) = @_;
	return $node->poll_query_until($db, "SELECT state FROM claimqueue.jobs WHERE id = $job", $state);
}
# Waits until the lease that ends at LEASE_END has ended and app's reaper has
# run PASSES passes since: the reaper's passes are the test's clock.
sub passes_after
{
	my ($lease_end, $passes) = @_;
	$node->poll_query_until('app', "SELECT now() > '$lease_end'");
	my $before = app('SELECT passes FROM reaper_stats');
	$node->poll_query_until('app', "SELECT passes >= $before + $passes FROM reaper_stats");
}

# --- discovery and reaping
ok($node->poll_query_until('postgres', q{SELECT count(*) FROM pg_stat_activity
	WHERE backend_type = 'claimqueue launcher' AND datname IS NULL}, '1'),
	'the launcher runs, connected to no database');
ok(has_reaper('app'), 'a reaper runs in the database with the extension');
is($node->safe_psql('postgres', "SELECT count(*) $reaper = 'postgres'"), '0',
	'no reaper in a database without it');
ok($node->poll_query_until('app', 'SELECT state FROM reaper_stats', 'running'), 'reaper_stats says running');

my $job = abandoned_job('app');
ok(becomes('app', $job, 'ready'), 'an abandoned lease comes back to ready');
is(app("SELECT last_error FROM claimqueue.jobs WHERE id = $job"),
	'lease expired (worker doomed-worker, attempt 1)', "with 'lease expired' as that attempt's error");
is(app("SELECT run_at > started_at FROM claimqueue.jobs WHERE id = $job"), 't',
	'and a backoff (run_at moved forward)');
$job = abandoned_job('app', 1);
ok(becomes('app', $job, 'failed'), 'with its attempts used up it becomes failed');
is(app('SELECT jobs_reaped >= 2 AND last_pass_at IS NOT NULL FROM reaper_stats'), 't',
	'reaper_stats counts the reaped jobs');

# --- retention: finished jobs older than the queue's retention are purged.
# The rows are made old by hand, below the time the reaper's whole sweeps have
# shown no done job to be older than (DoneSweep in src/engine/maintenance.hpp);
# a reaper that starts knows no such time and reads the table, so each test
# restarts app's reaper after its UPDATE.
sub restart_app_reaper
{
	my $pid = reaper_pid('app');
	$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
	gone($pid);
	has_reaper('app');
}
app(q{SELECT create_queue('short', retention => '1 hour');
	SELECT enqueue('short', jsonb_build_object('n', g)) FROM generate_series(1, 6) g;
	SELECT complete(id, attempt) FROM dequeue('short', 'w', 6);
	UPDATE claimqueue.jobs SET finished_at = now() - interval '2 hours'
	WHERE queue_id = (SELECT queue_id FROM claimqueue.queues WHERE name = 'short')
	  AND (payload->>'n')::int <= 4});
restart_app_reaper();
ok($node->poll_query_until('app', q{SELECT count(*) FROM queue_jobs WHERE queue = 'short'}, '2'),
	'old finished jobs are purged');
is(app(q{SELECT string_agg(payload->>'n', ',' ORDER BY id) FROM queue_jobs WHERE queue = 'short'}),
	'5,6', 'recent ones are kept');
is(app('SELECT jobs_purged >= 4 FROM reaper_stats'), 't', 'reaper_stats counts the purged jobs');
# A queue that keeps failed jobs longer (failed_retention) than done ones.
app(q{SELECT create_queue('keep_failed', retention => '1 hour', failed_retention => '1 day',
	                     max_attempts => 1);
	SELECT enqueue('keep_failed', jsonb_build_object('n', g)) FROM generate_series(1, 2) g;
	SELECT count(*) FROM dequeue('keep_failed', 'w', 2);
	SELECT complete(id, attempt) FROM queue_jobs WHERE queue = 'keep_failed' AND payload->>'n' = '1';
	SELECT fail(id, attempt, 'boom') FROM queue_jobs WHERE queue = 'keep_failed' AND payload->>'n' = '2';
	UPDATE claimqueue.jobs SET finished_at = now() - interval '2 hours'
	WHERE queue_id = (SELECT queue_id FROM claimqueue.queues WHERE name = 'keep_failed')});
restart_app_reaper();
ok($node->poll_query_until('app', q{SELECT string_agg(state, ',') FROM queue_jobs WHERE queue = 'keep_failed'},
	'failed'), 'a done job past retention is purged, a failed one kept for failed_retention');

# Done jobs within their retention cost a pass no read of the table once a
# whole sweep has shown it: a database of its own, so that nothing else the
# reaper does (leases, due jobs, cursors) reads claimqueue.jobs there, and a
# table of 129 blocks, vacuumed and analyzed once and then left alone by
# autovacuum: the other passes' partial indexes hold no dead entries whose rows
# a scan would check in the table, and the planner reads those empty indexes.
# Each queue is bounded by its own done jobs: 'default' keeps jobs finished two
# days ago (its retention is 7 days), 'short' has an hour's retention and jobs
# finished now, so no job is due, though the earliest one kept is older than
# the latest cutoff. The jobs are made old by hand, so the reaper is restarted
# after it (its first sweep must see them).
$node->safe_psql('postgres', 'CREATE DATABASE history');
$node->safe_psql('history', q{SET client_min_messages = error; CREATE EXTENSION claimqueue;
	SELECT count(enqueue('default', jsonb_build_object('n', g, 'pad', repeat('x', 1000))))
	FROM generate_series(1, 300) g;
	SELECT count(complete(id, attempt)) FROM dequeue('default', 'w', 300);
	UPDATE claimqueue.jobs SET finished_at = now() - interval '2 days';
	SELECT create_queue('short', retention => '1 hour');
	SELECT count(enqueue('short', jsonb_build_object('n', g))) FROM generate_series(1, 10) g;
	SELECT count(complete(id, attempt)) FROM dequeue('short', 'w', 10);
	ALTER TABLE claimqueue.jobs SET (autovacuum_enabled = off);
	VACUUM (ANALYZE) claimqueue.jobs});
ok(has_reaper('history'), 'a database with done jobs only');
my $history_reaper = reaper_pid('history');
$node->safe_psql('postgres', "SELECT pg_terminate_backend($history_reaper)");
gone($history_reaper);
ok(has_reaper('history'), 'its reaper restarted after the jobs were made old');
my $read = q{SELECT heap_blks_hit + coalesce(heap_blks_read, 0) FROM pg_statio_all_tables
	WHERE relid = 'claimqueue.jobs'::regclass};
sub history_passes
{
	my $before = $node->safe_psql('history', 'SELECT passes FROM reaper_stats');
	$node->poll_query_until('history', "SELECT passes >= $before + $_[0] FROM reaper_stats");
}
# The first sweep reads the table; a backend's reads reach the statistics up
# to a second late. So: windows of 10 passes (2 s) until one reads nothing,
# then 10 more passes. Without the bound every window reads the table.
my $blocks = $node->safe_psql('history', $read);
for (1 .. 15)
{
	history_passes(10);
	my $now = $node->safe_psql('history', $read);
	last if $now == $blocks;
	$blocks = $now;
}
history_passes(10);
is($node->safe_psql('history', $read), $blocks,
	'passes read no block of claimqueue.jobs while every done job is within its queue\'s retention');
$node->safe_psql('history', q{SELECT alter_queue('short', retention => '0 seconds')});
ok($node->poll_query_until('history', q{SELECT count(*) FROM queue_jobs WHERE queue = 'short'}, '0'),
	'a shorter retention of one queue is read at the next pass: its done jobs are purged');
is($node->safe_psql('history', q{SELECT count(*) FROM queue_jobs WHERE queue = 'default'}), '300',
	'the other queue keeps its jobs');
$node->safe_psql('history', q{SELECT alter_queue('default', retention => '0 seconds')});
ok($node->poll_query_until('history', 'SELECT count(*) FROM claimqueue.jobs', '0'),
	'a shorter retention is read at the next pass: the done jobs are purged');
$node->safe_psql('postgres', 'DROP DATABASE history');

# --- databases and extensions that come and go while the server runs
# --- all_reaper_stats: every database's reaper, from the launcher's slots. As
# pg_stat_activity shows other roles' sessions: the state and pid to whoever
# may read it; another database's start, passes, counters and last error only
# to a role with the privileges of pg_read_all_stats.
$node->safe_psql('postgres', 'CREATE DATABASE peers');
$node->safe_psql('peers', 'SET client_min_messages = error; CREATE EXTENSION claimqueue');
ok($node->poll_query_until('peers', 'SELECT passes > 0 FROM reaper_stats'), 'the reaper of peers runs passes');
is($node->safe_psql('app', q{SELECT string_agg(database || ' ' || state || ' ' || (pid IS NOT NULL), ',' ORDER BY database)
		FROM all_reaper_stats WHERE database IN ('app', 'peers')}), 'app running true,peers running true',
	'all_reaper_stats in app shows the reapers of app and peers running, with their pids');
is($node->safe_psql('app', q{SELECT pid FROM all_reaper_stats WHERE database = 'peers'}), reaper_pid('peers'),
	"all_reaper_stats gives the pid of peers' reaper");
$node->safe_psql('postgres', 'CREATE ROLE watcher LOGIN; GRANT claimqueue_consumer TO watcher');
my $details = q{SELECT database, started_at IS NOT NULL, last_pass_at IS NOT NULL, passes > 0, jobs_reaped IS NOT NULL
	FROM all_reaper_stats WHERE database IN ('app', 'peers') ORDER BY database};
is($node->safe_psql('app', "SET ROLE watcher; $details"), "app|t|t|t|t\npeers|f|f||f",
	"without pg_read_all_stats: this database's reaper in full, another's state and pid only");
$node->safe_psql('postgres', 'GRANT pg_read_all_stats TO watcher');
is($node->safe_psql('app', "SET ROLE watcher; $details"), "app|t|t|t|t\npeers|t|t|t|t",
	"with pg_read_all_stats: every database's reaper in full");
$node->safe_psql('postgres', 'REVOKE claimqueue_consumer FROM watcher');
is($node->safe_psql('app', q{SELECT has_table_privilege('watcher', 'all_reaper_stats', 'SELECT')}), 'f',
	'a role without a claimqueue role may not read all_reaper_stats');
$node->safe_psql('postgres', 'DROP ROLE watcher');
$node->safe_psql('postgres', 'DROP DATABASE peers');
ok($node->poll_query_until('app', q{SELECT count(*) FROM all_reaper_stats WHERE database = 'peers'}, '0'),
	'a dropped database leaves all_reaper_stats');

$node->safe_psql('postgres', 'CREATE DATABASE late');
$node->safe_psql('late', 'SET client_min_messages = error; CREATE EXTENSION claimqueue');
ok(has_reaper('late'), 'a database created later gets its reaper');
ok(becomes('late', abandoned_job('late'), 'ready'), 'which reaps there');
$node->safe_psql('late', 'DROP EXTENSION claimqueue');
ok(no_reaper('late'), 'DROP EXTENSION ends that reaper');
$node->safe_psql('late', 'SET client_min_messages = error; CREATE EXTENSION claimqueue');
ok(has_reaper('late'), 'CREATE EXTENSION again brings it back');
is($node->psql('postgres', 'DROP DATABASE late'), 0, 'DROP DATABASE succeeds while its reaper runs');
ok(no_reaper('late'), 'and leaves no reaper behind');
$node->psql('postgres', 'CREATE DATABASE copied TEMPLATE app');
is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_database WHERE datname = 'copied'}), '1',
	'CREATE DATABASE ... TEMPLATE of a database with a reaper succeeds');
ok(has_reaper('copied'), 'and the copy gets a reaper of its own');
is($node->psql('postgres', 'ALTER DATABASE copied RENAME TO renamed'), 0,
	'ALTER DATABASE ... RENAME succeeds while its reaper runs');
ok(has_reaper('renamed'), 'the renamed database gets its reaper back');
$node->safe_psql('postgres', 'DROP DATABASE renamed');

# --- upgrade: a database on a version older than the previous release
# (0.1.0 promised no background worker; 0.3.0 is the last one refused) gets no
# reaper and no queue API from this library; ALTER EXTENSION UPDATE starts
# both. The queue API's refusal is kept out of the server log, which is
# checked below. One at the previous release (0.4.0) is served as it is: its
# reaper runs before the update and after it (test/perl/rolling.pl runs that
# release's whole API under this library).
# The released versions' full scripts are not installed: test/lib/released.sh
# makes an extension directory with them and the installed claimqueue, which
# the sessions that create and update them name (Debian's extension_destdir).
my ($released) = do {
	local $ENV{PGHOST} = $node->host;
	local $ENV{PGPORT} = $node->port;
	local $ENV{TMPDIR} = PostgreSQL::Test::Utils::tempdir();
	run_command([ 'bash', '-c', 'source "$0" && released_extension_dir', "$FindBin::RealBin/../lib/released.sh" ]);
};
note "released versions in $released";
# How a session names that directory: Debian's extension_destdir up to 17,
# from 18 the upstream extension_control_path (test/lib/released.sh says why).
my ($sharedir) = run_command([ 'pg_config', '--sharedir' ]);
chomp $sharedir;
my $use_released = $node->safe_psql('postgres', 'SHOW server_version_num') >= 180000
  ? "SET extension_control_path = '$released$sharedir:\$system'"
  : "SET extension_destdir = '$released'";
for my $version ('0.1.0', '0.3.0')
{
	$node->safe_psql('postgres', 'CREATE DATABASE old');
	$node->safe_psql('old', "$use_released; SET client_min_messages = error;
		CREATE EXTENSION claimqueue VERSION '$version'");
	my ($ret, $out, $err) = $node->psql('old', q{SET log_min_messages = fatal; SELECT enqueue('default', '{}')});
	like($err, qr/HINT:  Run ALTER EXTENSION claimqueue UPDATE in this database\./,
		"on $version the queue API refuses with a hint to run ALTER EXTENSION UPDATE");
	# The abandoned claim, written as that version's dequeue() left it.
	my $old = $node->safe_psql('old', q{INSERT INTO claimqueue.jobs (queue_id, state, attempt,
		max_attempts, run_at, created_at, started_at, lease_expires_at, worker, payload)
		VALUES (1, 'running', 1, 5, now(), now(), now(), now() + interval '1 second',
		        'doomed-worker', '{}') RETURNING id});
	# Absence needs time: five passes of app's reaper (a second) after the
	# lease ended, in which a reaper of "old", if there were one, would act.
	passes_after($node->safe_psql('old', "SELECT lease_expires_at FROM claimqueue.jobs WHERE id = $old"), 5);
	is($node->safe_psql('old', "SELECT state FROM claimqueue.jobs WHERE id = $old"), 'running',
		"a database on $version gets no reaper: its expired lease stays running");
	is($node->safe_psql('postgres', "SELECT count(*) $reaper = 'old'"), '0', 'and no reaper process');
	$node->safe_psql('old', "$use_released; ALTER EXTENSION claimqueue UPDATE");
	ok(has_reaper('old'), "ALTER EXTENSION claimqueue UPDATE ($version) gives it one");
	ok(becomes('old', $old, 'ready'), 'which returns the lease');
	$node->safe_psql('postgres', 'DROP DATABASE old');
}
{
	$node->safe_psql('postgres', 'CREATE DATABASE previous');
	$node->safe_psql('previous', "$use_released; SET client_min_messages = error;
		CREATE EXTENSION claimqueue VERSION '0.4.0'");
	ok(has_reaper('previous'), 'a database at the previous release, 0.4.0, gets a reaper');
	ok(becomes('previous', abandoned_job('previous'), 'ready'), 'which returns an expired lease');
	$node->safe_psql('previous', "$use_released; ALTER EXTENSION claimqueue UPDATE");
	ok(has_reaper('previous'), 'after ALTER EXTENSION claimqueue UPDATE (0.4.0) it still has one');
	ok(becomes('previous', abandoned_job('previous'), 'ready'), 'which returns an expired lease');
	$node->safe_psql('postgres', 'DROP DATABASE previous');
}

# --- the scan of expired leases starts at a mark (so it does not walk the
# entries of jobs finished under an old snapshot); the mark never passes the
# leases of a claim still in flight: this claim commits after its lease ended
# and the reaper ran passes meanwhile, and is still returned.
my $claimer = $node->background_psql('app');
$claimer->query_safe(q{SELECT create_queue('inflight'); SELECT enqueue('inflight', '{}')});
passes_after($claimer->query_safe(q{BEGIN;
	SELECT lease_expires_at FROM dequeue('inflight', 'slow-committer', lease => '1 second')}), 5);
$claimer->query_safe('COMMIT');
ok($node->poll_query_until('app', q{SELECT state || ' ' || attempt FROM queue_jobs WHERE queue = 'inflight'},
	'ready 1'), "a claim committed after its lease ended is reaped (the lease scan's mark waited for it)");

# A claim made in a prepared transaction: its lease ends while it is prepared,
# the reaper runs passes meanwhile (and sees nothing of it), then COMMIT
# PREPARED. The reaper returns it within two intervals of the commit: the poll
# allows 10 s, where the once-a-minute reset of the mark would take up to 60.
$claimer->query_safe(q{SELECT create_queue('prepared'); SELECT enqueue('prepared', '{}')});
passes_after($claimer->query_safe(q{BEGIN;
	SELECT lease_expires_at FROM dequeue('prepared', 'prepared-worker', lease => '1 second');
	PREPARE TRANSACTION 'cq_prepared_claim'}), 5);
$claimer->quit;
app(q{COMMIT PREPARED 'cq_prepared_claim'});
{
	local $PostgreSQL::Test::Utils::timeout_default = 10;
	ok($node->poll_query_until('app', q{SELECT state || ' ' || attempt FROM queue_jobs WHERE queue = 'prepared'},
		'ready 1'), 'a claim committed by COMMIT PREPARED after its lease ended is reaped promptly');
}

# --- settings: claimqueue.reaper_enabled, on reload
$node->safe_psql('postgres', 'ALTER SYSTEM SET claimqueue.reaper_enabled = off');
$node->reload;
ok(no_reaper('app'), 'reaper_enabled = off stops the reaper (SIGHUP)');
ok($node->poll_query_until('app', 'SELECT state FROM reaper_stats', 'disabled'), 'reaper_stats says disabled');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET claimqueue.reaper_enabled');
$node->reload;
ok(has_reaper('app'), 'reaper_enabled = on starts it again');

# --- signals: SIGTERM ends a reaper (the launcher starts a new one), also one
# that waits for a lock that is still held; SIGTERM ends the launcher (the
# postmaster starts a new one)
my $pid = reaper_pid('app');
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
ok(gone($pid), 'SIGTERM (pg_terminate_backend) ends the reaper');
ok(has_reaper('app'), 'and the launcher starts a new one');

my $locker = $node->background_psql('app');
$locker->query_safe('BEGIN; LOCK TABLE claimqueue.jobs IN ACCESS EXCLUSIVE MODE');
$node->poll_query_until('postgres', "SELECT count(*) $reaper = 'app' AND wait_event_type = 'Lock'", '1');
$pid = reaper_pid('app');
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
ok(gone($pid), 'SIGTERM ends a reaper waiting for a lock, while the lock is held');
is(app(q{SELECT count(*) FROM pg_locks WHERE mode = 'AccessExclusiveLock'
	AND relation = 'claimqueue.jobs'::regclass AND granted}), '1', '(the lock was still held)');
$locker->query_safe('ROLLBACK');
$locker->quit;
ok(has_reaper('app'), 'and the launcher starts a new one');

$pid = $node->safe_psql('postgres', q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'claimqueue launcher'});
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
ok($node->poll_query_until('postgres', q{SELECT count(*) FROM pg_stat_activity
	WHERE backend_type = 'claimqueue launcher' AND pid <> } . $pid, '1'),
	'SIGTERM ends the launcher, and the postmaster starts a new one');

# --- a failed pass is logged with the failure's own SQLSTATE, detail and
# context (here a trigger on the jobs table refuses the reaper's update; the
# reaper's statements run under search_path pg_catalog, pg_temp, so the
# context may name the function with its schema)
my $log_offset = -s $node->logfile;
app(q{CREATE FUNCTION refuse_trap() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
	  IF NEW.worker = 'trap-worker' AND NEW.state <> 'running' THEN
	    RAISE EXCEPTION 'trap refuses job %', NEW.id
	      USING ERRCODE = 'QX123', DETAIL = 'the trap detail';
	  END IF;
	  RETURN NEW;
	END $$;
	CREATE TRIGGER refuse_trap BEFORE UPDATE ON claimqueue.jobs
	  FOR EACH ROW EXECUTE FUNCTION refuse_trap();
	SELECT create_queue('trap'); SELECT enqueue('trap', '{}');
	SELECT id FROM dequeue('trap', 'trap-worker', lease => '1 second')});
my $failed_pass = qr/QX123 WARNING:  claimqueue reaper: pass failed: trap refuses job \d+\n/
  . qr/(?:.*\n){0,3}?.*QX123 DETAIL:  the trap detail\n/
  . qr/(?:.*\n){0,3}?.*QX123 CONTEXT:  PL\/pgSQL function (?:public\.)?refuse_trap\(\)/;
ok(eval { $node->wait_for_log($failed_pass, $log_offset) },
	'a failed pass is logged with its SQLSTATE, detail and context');
ok($node->poll_query_until('app', q{SELECT last_error LIKE 'trap refuses job%' FROM reaper_stats}),
	'reaper_stats.last_error has the failure');
app('DROP TRIGGER refuse_trap ON claimqueue.jobs; DROP FUNCTION refuse_trap()');
ok($node->poll_query_until('app', q{SELECT state FROM queue_jobs WHERE queue = 'trap'}, 'ready'),
	'once the trigger is gone, the job is reaped');

# --- schedules: the reaper enqueues one job per slot. "every 1 second" with
# catch_up 'all' must give every second its job, exactly one, across the
# crashes, restarts, the immediate shutdown and the promotion below: a slot's
# job and the advance of next_run_at commit together, so a pass cut short is
# redone whole by the next reaper. In two databases, each its own.
$node->safe_psql('postgres', 'CREATE DATABASE app2');
$node->safe_psql('app2', 'SET client_min_messages = error; CREATE EXTENSION claimqueue');
for my $db ('app', 'app2')
{
	$node->safe_psql($db, qq{SELECT create_queue('ticks');
		SELECT schedule('tick', 'every 1 second', 'ticks', '{"db": "$db"}', catch_up => 'all')});
}
my $ticks = q{FROM claimqueue.jobs WHERE payload->'claimqueue'->>'schedule' = 'tick'};
sub tick_count { return $_[0]->safe_psql($_[1], "SELECT count(*) $ticks"); }
# Waits for N more ticks in DB on NODE, then checks that the slots from the
# first to the last each have exactly one job, due at its slot.
sub ticks_whole
{
	my ($node_, $db, $more, $what) = @_;
	my $before = tick_count($node_, $db);
	ok($node_->poll_query_until($db, "SELECT count(*) >= $before + $more $ticks"),
		"$db: the schedule fires $what");
	is($node_->safe_psql($db, qq{SELECT count(*) = count(DISTINCT run_at)
			AND count(*) = 1 + extract(epoch FROM max(run_at) - min(run_at))
			AND bool_and(payload->'claimqueue'->>'slot'
			             = to_char(run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
			AND bool_and(payload->>'db' = '$db') $ticks}), 't',
		"$db: one job for every slot, $what");
}
# A paused schedule beside it: the reaper fires none of its slots while it
# fires tick's, across the crash and restarts below (the pause is a column of
# the schedule's row).
app(q{SELECT schedule('paused-tick', 'every 1 second', 'ticks', catch_up => 'all');
	SELECT pause_schedule('paused-tick')});
my $paused_ticks = q{FROM claimqueue.jobs WHERE payload->'claimqueue'->>'schedule' = 'paused-tick'};
ticks_whole($node, 'app', 3, 'in the background');
ticks_whole($node, 'app2', 3, 'in a second database');

# --- crashes and restarts: SIGKILL of a reaper (the postmaster restarts every
# process), a restart, an immediate shutdown
$pid = reaper_pid('app');
kill 'KILL', $pid;
ok(poll_after_crash($node, 'postgres', "SELECT count(*) $reaper = 'app' AND pid <> $pid", '1'),
	'a killed reaper (SIGKILL: the postmaster restarts every process) is back');
ok(becomes('app', abandoned_job('app'), 'ready'), 'and reaps');

# A paused queue: the reaper still returns its expired leases, and nothing
# claims them. The pause is a setting of the queue (a column of its row), so
# it outlasts a restart.
$job = abandoned_job('app');
my $paused = "abandoned_$queues";
app("SELECT pause_queue('$paused'); SELECT enqueue('$paused', '{\"n\": 2}')");
ok(becomes('app', $job, 'ready'), 'the reaper returns an expired lease of a paused queue');

$node->restart;
ok(has_reaper('app'), 'after a restart the reaper is back');
is(app("SELECT paused FROM queue_settings WHERE queue = '$paused'"), 't',
	'a paused queue is still paused after a restart');
is(app("SELECT count(*) FROM dequeue('$paused', 'w', 10)"), '0', 'and claims nothing');
app("SELECT resume_queue('$paused')");
# Each poll claims what is due and counts it with what was running before.
ok($node->poll_query_until('app', "WITH c AS (SELECT count(*) AS n FROM dequeue('$paused', 'w', 10))
	SELECT n + (SELECT count(*) FROM queue_jobs WHERE queue = '$paused' AND state = 'running') FROM c",
	'2'), 'once resumed, both of its jobs are claimed (the reaped one after its backoff)');

$job = abandoned_job('app');
$node->stop('immediate');
$node->start;
ok(becomes('app', $job, 'ready'),
	'after an immediate shutdown, the lease that expired while the server was down comes back');
ticks_whole($node, 'app', 3, 'across a SIGKILL, a restart and an immediate shutdown');
ticks_whole($node, 'app2', 3, 'in the second database, across the same');
is(app(q{SELECT paused FROM schedules WHERE name = 'paused-tick'}), 't',
	'a paused schedule is still paused after a SIGKILL, a restart and an immediate shutdown');
is(app("SELECT count(*) $paused_ticks"), '0',
	'while the reaper fired tick, the paused schedule fired nothing');
# Resumed: it fires again, from its first slot after the resume, none of the
# slots it was paused for (catch_up 'all' would have given them jobs).
my $resumed_after = app('SELECT clock_timestamp()');
app(q{SELECT resume_schedule('paused-tick')});
ok($node->poll_query_until('app', "SELECT count(*) >= 2 $paused_ticks"), 'resumed, it fires');
is(app("SELECT count(*) $paused_ticks AND run_at < '$resumed_after'"), '0',
	'no job for a slot from before it was resumed');
app(q{SELECT unschedule('paused-tick')});

# --- a hot standby is idle; after promotion it reaps
$node->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($node, 'base', has_streaming => 1);
$standby->start;
# The primary stops reaping (the standby keeps the setting it was copied with).
$node->safe_psql('postgres', 'ALTER SYSTEM SET claimqueue.reaper_enabled = off');
$node->reload;
no_reaper('app');
$job = abandoned_job('app');
ok($standby->poll_query_until('app', "SELECT lease_expires_at < now() FROM claimqueue.jobs WHERE id = $job"),
	'the standby replays the abandoned job');
is($standby->safe_psql('postgres', q{SELECT count(*) FROM pg_stat_activity WHERE backend_type LIKE 'claimqueue%'}),
	'0', 'a hot standby runs no claimqueue worker');
is($standby->safe_psql('app', 'SELECT state FROM reaper_stats'), 'standby', 'reaper_stats on the standby says standby');
$standby->promote;
ok($standby->poll_query_until('app', "SELECT state FROM claimqueue.jobs WHERE id = $job", 'ready'),
	'after promotion its reaper returns the expired lease');
ticks_whole($standby, 'app', 3, 'after promotion, on from the slots the primary fired');
$standby->stop;
unlike(slurp_file($standby->logfile), qr/\b(ERROR|PANIC):/, "nothing at ERROR in the standby's log");
$node->safe_psql('postgres', 'ALTER SYSTEM RESET claimqueue.reaper_enabled');
$node->reload;

# --- the log: nothing at ERROR, one LOG line per pass that did something
my $log = slurp_file($node->logfile);
unlike($log, qr/\b(ERROR|PANIC):/, 'nothing at ERROR in the server log');
like($log, qr/claimqueue reaper: returned \d+ expired leases/, 'the reaper logs what it did');

done_testing();

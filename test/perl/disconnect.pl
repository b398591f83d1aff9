# Claims that die with their session (release_on_disconnect), end to end: a
# worker whose client process is killed (kill -9), a session ended by
# pg_terminate_backend, and a server stopped immediately and started again
# each get their job back from the reaper long before a 5-minute lease ends;
# a claim without the option, and an owned claim of a session that hangs with
# its connection open, wait for their lease; a late complete() of the ended
# attempt is refused with QC003. Recovery times (the session's end to the job
# ready) are reported, not asserted; every wait polls with a deadline.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use CrashRestart;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('disconnect');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'claimqueue'
claimqueue.reaper_interval = '1s'
restart_after_crash = on
});
$node->start;
sub app { return $node->safe_psql('app', $_[0]); }
$node->safe_psql('postgres', 'CREATE DATABASE app');
app('SET client_min_messages = error; CREATE EXTENSION claimqueue');
ok($node->poll_query_until('app', 'SELECT state FROM reaper_stats', 'running'), 'the reaper runs');

# A worker: psql as a client process of its own, holding its connection open
# after it claimed one job of a new queue (5-minute lease, no backoff, so a
# returned job's run_at is the moment it came back). Returns the harness, the
# job, its attempt and the backend's pid.
my $queues = 0;
sub worker
{
	my ($option) = @_;
	my $queue = 'q' . ++$queues;
	app("SELECT create_queue('$queue', lease => '5 minutes', backoff_base => '0');
		SELECT enqueue('$queue')");
	my ($in, $out, $err) = ('', '', '');
	my $h = IPC::Run::start(
		[ 'psql', '-X', '-qAt', '-v', 'ON_ERROR_STOP=1', '-h', $node->host, '-p', $node->port,
		  '-d', 'app' ],
		'<', \$in, '>', \$out, '2>', \$err, IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	$in .= "SELECT pg_backend_pid() || ' ' || id || ' ' || attempt FROM dequeue('$queue', 'w-$queue'"
	  . ($option ? ", release_on_disconnect => true" : '') . ");\n";
	$h->pump until $out =~ /^(\d+) (\d+) (\d+)$/m;
	return { harness => $h, queue => $queue, pid => $1, job => $2, attempt => $3 };
}
sub state_of { return app("SELECT state FROM claimqueue.jobs WHERE id = $_[0]{job}"); }
sub backend_gone
{
	return $node->poll_query_until('app', "SELECT count(*) FROM pg_stat_activity WHERE pid = $_[0]{pid}", '0');
}
# Seconds from the server time `since` to the job's return (its run_at).
sub recovery
{
	my ($w, $since) = @_;
	ok($node->poll_query_until('app', "SELECT state FROM claimqueue.jobs WHERE id = $w->{job}", 'ready'),
		"$w->{queue}: the job is ready again");
	my $s = app("SELECT round(extract(epoch FROM run_at - '$since'::timestamptz)::numeric, 3)
		FROM claimqueue.jobs WHERE id = $w->{job}");
	return $s;
}
# Waits until the reaper has run `n` more passes: the reaper's passes are the clock.
sub passes
{
	my $before = app('SELECT passes FROM reaper_stats');
	$node->poll_query_until('app', "SELECT passes >= $before + $_[0] FROM reaper_stats");
}
my @figures;

# --- (a) kill -9 of the client process
my $w = worker(1);
is(state_of($w), 'running', 'a claim with release_on_disconnect is running');
my $t = app('SELECT clock_timestamp()');
kill 'KILL', $w->{harness}{KIDS}[0]{PID};
eval { $w->{harness}->finish };
my $s = recovery($w, $t);
push @figures, "kill -9 of the client: ${s}s";
is(app("SELECT last_error || ' ' || (owner_session IS NULL)::text FROM claimqueue.jobs WHERE id = $w->{job}"),
	"session ended (worker w-$w->{queue}, attempt 1) true",
	"with 'session ended' as that attempt's error, and no owner");
cmp_ok(app("SELECT run_at < started_at + interval '5 minutes' FROM claimqueue.jobs WHERE id = $w->{job}"),
	'eq', 't', 'before the lease would have ended');

# --- (d) a late complete of the ended attempt is refused
my ($ret, $stdout, $stderr) = $node->psql('app', "\\set VERBOSITY verbose\nSELECT complete($w->{job}, $w->{attempt})");
like($stderr, qr/QC003/, 'a late complete() of the ended attempt raises QC003');
is(state_of($w), 'ready', 'and changes nothing');

# --- (b) pg_terminate_backend of the claiming session
$w = worker(1);
$t = app("SELECT clock_timestamp() FROM pg_terminate_backend($w->{pid})");
eval { $w->{harness}->finish };
$s = recovery($w, $t);
push @figures, "pg_terminate_backend: ${s}s";

# complete_and_dequeue's claim dies with its session too.
app("SELECT create_queue('cad', lease => '5 minutes', backoff_base => '0'); SELECT enqueue('cad')");
my $cad = $node->background_psql('app');
my $cad_job = $cad->query_safe(q{SELECT id FROM complete_and_dequeue(NULL, NULL, 'cad', 'w',
	release_on_disconnect => true)});
$cad->quit;
ok($node->poll_query_until('app', "SELECT state FROM claimqueue.jobs WHERE id = $cad_job", 'ready'),
	'a complete_and_dequeue() claim comes back when its session quits');

# --- (c) without the option the claim outlives its session until its lease ends
$w = worker(0);
kill 'KILL', $w->{harness}{KIDS}[0]{PID};
eval { $w->{harness}->finish };
ok(backend_gone($w), 'the plain claim\'s session has ended');
passes(3);
is(state_of($w), 'running', 'a claim without release_on_disconnect is still running after 3 reaper passes');
is(app(qq{SET claimqueue.debug_clock_offset = '6min'; SELECT reap('$w->{queue}')}), '1',
	'and comes back once its lease has ended');

# --- (f) a session that hangs with its connection open keeps its claim
$w = worker(1);
passes(3);
is(state_of($w), 'running', 'an owned claim of a live (hanging) session is still running after 3 reaper passes');
is(app(qq{SET claimqueue.debug_clock_offset = '6min'; SELECT reap('$w->{queue}')}), '1',
	'its lease still bounds it');
is(app("SELECT last_error FROM claimqueue.jobs WHERE id = $w->{job}"),
	"lease expired (worker w-$w->{queue}, attempt 1)", "with 'lease expired' as the reason");
$w->{harness}{KIDS}[0]{PID} && kill 'KILL', $w->{harness}{KIDS}[0]{PID};
eval { $w->{harness}->finish };

# --- (e) an immediate stop and start of the server
$w = worker(1);
$node->stop('immediate');
eval { $w->{harness}->finish };
$node->start;
$t = app('SELECT pg_postmaster_start_time()');
$s = recovery($w, $t);
push @figures, "immediate stop and start: ${s}s after the server started";
is(app("SELECT last_error FROM claimqueue.jobs WHERE id = $w->{job}"),
	"session ended (worker w-$w->{queue}, attempt 1)", 'a claim made before the restart belongs to an ended session');

# --- a backend killed by SIGKILL: the server restarts after the crash
$w = worker(1);
kill 'KILL', $w->{pid};
eval { $w->{harness}->finish };
# The killed backend leaves pg_stat_activity only when the server has restarted.
ok(poll_after_crash($node, 'postgres', "SELECT count(*) FROM pg_stat_activity WHERE pid = $w->{pid}", '0'),
	'the server restarts after the crash');
$t = app('SELECT pg_postmaster_start_time()');
ok($node->poll_query_until('app', "SELECT state FROM claimqueue.jobs WHERE id = $w->{job}", 'ready'),
	'a claim whose backend was killed (crash and restart) comes back');

note "recovery time against a 5-minute lease (reaper_interval 1s): $_" for @figures;
$node->stop;
done_testing();

# The waiting dequeue, end to end, with room for four waiters. Waiters are
# background psql sessions named by application_name that CALL dequeue_wait;
# the checks read pg_stat_activity and claimqueue.waiters() (wakeups counts
# the times something woke a waiter), and what each CALL printed.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'claimqueue'
claimqueue.max_waiters = 4
claimqueue.reaper_interval = '200ms'
});
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');
sub app { return $node->safe_psql('app', $_[0]); }
app(q{SET client_min_messages = error; CREATE EXTENSION claimqueue; SELECT create_queue('q')});

# A background session NAME that runs SQL and then prints "returned"; returns
# once SQL has started.
my %session;
sub start
{
	my ($name, $sql) = @_;
	my $s = $node->background_psql('app', on_error_stop => 0);
	$s->query_safe("SET application_name = '$name'");
	$s->query_until(qr/started/, "\\echo started\n$sql;\n\\echo returned\n");
	$session{$name} = $s;
}
sub start_waiter
{
	my ($name, $queue, $wait) = @_;
	start($name, "CALL dequeue_wait('$queue', '$name', wait => '" . ($wait // '60s') . "')");
}
# What NAME's SQL printed (result or error), once it returned or the session
# ended.
sub output_of
{
	my $s = $session{ $_[0] };
	$s->{run}->pump while $s->{stdout} !~ /^returned$/m && $s->{run}->pumpable;
	return $s->{stdout} . $s->{stderr};
}
# NAME's backend sleeps in dequeue_wait: registered, waiting on its latch.
sub waiting
{
	return $node->poll_query_until('app', qq{SELECT count(*) FROM pg_stat_activity a
		JOIN claimqueue.waiters() w USING (pid)
		WHERE a.application_name = '$_[0]' AND a.wait_event_type = 'Extension'}, '1');
}
sub waiter_slots { return app('SELECT count(*) FROM claimqueue.waiters()'); }
sub wakeups { return app('SELECT sum(wakeups) FROM claimqueue.waiters()'); }

# --- a wait with nothing to do
is(app(q{CALL dequeue_wait('q', 'w', wait => '200ms')}), '[]',
	'a wait with nothing to do returns [] once its wait is over');
is(waiter_slots(), '0', 'and leaves no waiter behind');

# --- a waiter holds no snapshot while it sleeps
start_waiter('w1', 'q');
ok(waiting('w1'), 'a waiter sleeps on its latch (wait_event Extension)');
is(app(q{SELECT backend_xmin IS NULL AND backend_xid IS NULL FROM pg_stat_activity
	WHERE application_name = 'w1'}), 't',
	'holding no snapshot: backend_xmin and backend_xid are NULL while it waits');
# The control: a statement that sleeps inside a SELECT (what a waiting
# function would do) does show a backend_xmin, so the check above can fail.
start('sleeper', 'SELECT pg_sleep(60)');
$node->poll_query_until('app', q{SELECT count(*) FROM pg_stat_activity
	WHERE application_name = 'sleeper' AND wait_event = 'PgSleep'}, '1');
is(app(q{SELECT backend_xmin IS NOT NULL FROM pg_stat_activity WHERE application_name = 'sleeper'}),
	't', 'control: a SELECT sleeping in pg_sleep() holds a backend_xmin meanwhile');
app(q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'sleeper'});
output_of('sleeper');
is(app(q{SELECT state || ' ' || left(query, 17) FROM pg_stat_activity WHERE application_name = 'w1'}),
	'active CALL dequeue_wait', 'and its query is the CALL, state active');

# --- enqueue commit wakes; rollback and an open transaction do not
my $tx = $node->background_psql('app');
$tx->query_safe(q{BEGIN; SELECT enqueue('q', '{"n": 1}')});
is(wakeups(), '0', 'an enqueue in an open transaction does not wake it');
$tx->query_safe('ROLLBACK');
is(wakeups(), '0', 'a rollback does not wake it (wakeups 0)');
ok(waiting('w1'), '  ... still waiting');
my $committed = $tx->query_safe(q{BEGIN; SELECT enqueue('q', '{"n": 2}'); COMMIT});
$tx->quit;
like(output_of('w1'), qr/"id": $committed,/, 'a commit wakes it and it returns the committed job');
is(app("SELECT state || ' ' || attempt || ' ' || worker FROM claimqueue.jobs WHERE id = $committed"),
	'running 1 w1', '  ... which is running under attempt 1 for worker w1');

# --- one job wakes one waiter, two jobs two
start_waiter($_, 'q') for qw(h1 h2 h3);
ok($node->poll_query_until('app', q{SELECT count(*) FROM claimqueue.waiters() WHERE queue = 'q'}, '3'),
	'three waiters on one queue');
app(q{SELECT enqueue('q', '{"herd": 1}')});
ok($node->poll_query_until('app', q{SELECT count(*) FROM claimqueue.waiters() WHERE queue = 'q'}, '2'),
	'one enqueued job: exactly one waiter returns');
is(app(q{SELECT sum(wakeups) FROM claimqueue.waiters() WHERE queue = 'q'}), '0',
	'  ... and the two others were never woken (no thundering herd)');
app(q{SELECT count(*) FROM enqueue_batch('q', ARRAY['{"herd": 2}', '{"herd": 3}']::jsonb[])});
is(join(',', map { scalar(() = output_of($_) =~ /"herd": \d/g) } qw(h1 h2 h3)), '1,1,1',
	'two jobs in one commit: both remaining waiters return with one each');
is(app(q{SELECT count(*) || ' ' || count(DISTINCT worker) FROM claimqueue.jobs
	WHERE payload ? 'herd' AND state = 'running'}), '3 3', '  ... each job claimed once');

# --- a delayed job wakes its waiter when run_at arrives
start_waiter('d1', 'q');
waiting('d1');
my $delayed = app(q{SELECT enqueue('q', '{"delayed": 1}', run_at => now() + interval '1.5 seconds')});
is(app("SELECT run_at > now() FROM claimqueue.jobs WHERE id = $delayed"), 't',
	'a delayed job is not claimable when enqueued');
ok($node->poll_query_until('app', "SELECT w.timer_at = j.run_at FROM claimqueue.waiters() w,
	claimqueue.jobs j WHERE j.id = $delayed"),
	"its commit gives the waiter the queue's timer at the job's run_at");
like(output_of('d1'), qr/"id": $delayed,/, 'the waiter returns the delayed job once run_at has come');
is(app("SELECT started_at >= run_at FROM claimqueue.jobs WHERE id = $delayed"), 't',
	'  ... claimed at or after its run_at');
# A waiter that starts after the job was enqueued finds its run_at itself.
my $later = app(q{SELECT enqueue('q', '{"delayed": 2}', run_at => now() + interval '1 second')});
start_waiter('d2', 'q');
ok($node->poll_query_until('app', "SELECT w.timer_at = j.run_at FROM claimqueue.waiters() w,
	claimqueue.jobs j WHERE j.id = $later"),
	'a waiter started after a delayed enqueue takes the timer from next_due()');
like(output_of('d2'), qr/"id": $later,/, '  ... and returns that job when it is due');

# --- the reaper returning an expired lease wakes a waiter
app(q{SELECT create_queue('r', backoff_base => '0', backoff_cap => '0')});
my $abandoned = app(q{SELECT enqueue('r', '{"abandoned": 1}')});
app(q{SELECT id FROM dequeue('r', 'doomed', lease => '1 second')});
start_waiter('r1', 'r');
my $r1 = output_of('r1');
like($r1, qr/"attempt": 2/,
	'the reaper returns the expired job and wakes the waiter, which claims attempt 2');
like($r1, qr/"id": $abandoned,/, '  ... of that job');
is(app('SELECT jobs_reaped >= 1 FROM reaper_stats'), 't',
	"  ... after the reaper's pass (reaper_stats counts it)");

# --- fail() with a retry and retry() announce the job as enqueue does
app(q{SELECT create_queue('f', backoff_base => '0', backoff_cap => '0')});
my $failing = app(q{SELECT enqueue('f', '{"failing": 1}', max_attempts => 2)});
app(q{SELECT id FROM dequeue('f', 'f0')});
start_waiter('f1', 'f');
waiting('f1');
app("SELECT fail($failing, 1, 'boom', retry_in => '0')");
like(output_of('f1'), qr/"id": $failing,/,
	'fail() with a retry wakes a waiter, which claims attempt 2 of that job');
app("SELECT fail($failing, 2, 'boom again')");
start_waiter('f2', 'f');
waiting('f2');
is(app("SELECT state || ' ' || (SELECT sum(wakeups) FROM claimqueue.waiters()) FROM claimqueue.jobs
	WHERE id = $failing"), 'failed 0', 'a job failed for good wakes nobody');
app("SELECT retry($failing)");
like(output_of('f2'), qr/"attempt": 3/, 'retry() wakes a waiter, which claims attempt 3');

# --- a paused queue: its waiters sleep, holding no timer; a job enqueued into
# it wakes one, which looks, finds the queue paused and sleeps on without
# claiming; resume_queue()'s commit wakes them and they claim. (An isolation
# spec cannot hold a CALL that sleeps on its latch: its tester waits for
# every step that is not waiting for a lock.)
# NAME has looked again since time T (each look commits, starting the
# transaction that pg_stat_activity shows) and sleeps.
sub looked_since
{
	my ($name, $t) = @_;
	return $node->poll_query_until('app', qq{SELECT xact_start > '$t' AND wait_event_type = 'Extension'
		FROM pg_stat_activity WHERE application_name = '$name'});
}
app(q{SELECT create_queue('p'); SELECT pause_queue('p'); SELECT enqueue('p', '{"paused": 1}')});
start_waiter('p1', 'p');
ok(waiting('p1'), 'a waiter on a paused queue with a ready job sleeps');
is(app(q{SELECT timer_at IS NULL FROM claimqueue.waiters() WHERE queue = 'p'}), 't',
	'  ... holding no timer (nothing is due while the queue is paused)');
my $t = app('SELECT clock_timestamp()');
app(q{SELECT enqueue('p', '{"paused": 2}')});
ok(looked_since('p1', $t), 'a job enqueued into the paused queue wakes it, and it sleeps again');
is(app(q{SELECT count(*) FROM queue_jobs WHERE queue = 'p' AND state = 'ready'}), '2',
	'  ... having claimed nothing');
app(q{SELECT resume_queue('p')});
like(output_of('p1'), qr/"paused": 1/, "resume_queue()'s commit wakes it and it claims");
# Paused while a waiter sleeps on the queue.
app(q{SELECT create_queue('pp')});
start_waiter('p2', 'pp');
ok(waiting('p2'), 'a waiter sleeps on an empty queue');
app(q{SELECT pause_queue('pp')});
$t = app('SELECT clock_timestamp()');
app(q{SELECT enqueue('pp', '{"paused": 3}')});
ok(looked_since('p2', $t), 'the queue is paused: an enqueue wakes the waiter and it sleeps again');
is(app(q{SELECT count(*) FROM queue_jobs WHERE queue = 'pp' AND state = 'ready'}), '1',
	'  ... having claimed nothing');
app(q{SELECT resume_queue('pp')});
like(output_of('p2'), qr/"paused": 3/, 'resume_queue() wakes it and it claims the job');
# retry_jobs() announces the jobs it made ready as enqueue does.
app(q{SELECT cancel_jobs('p')});
start_waiter('p3', 'p');
ok(waiting('p3'), 'a waiter sleeps while the queue has only cancelled jobs');
app(q{SELECT retry_jobs('p', '{cancelled}')});
like(output_of('p3'), qr/"paused": 2/, 'retry_jobs() wakes it and it claims the retried job');

# --- cancel, statement_timeout, terminate end a wait at once and free the slot
start_waiter('c1', 'q');
waiting('c1');
app(q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'c1'});
like(output_of('c1'), qr/canceling statement due to user request/, 'pg_cancel_backend ends the wait');
is(waiter_slots(), '0', '  ... and frees its slot');
my ($ret, $out, $err) = $node->psql('app',
	q{SET statement_timeout = '300ms'; CALL dequeue_wait('q', 'st', wait => '60s')});
like($err, qr/canceling statement due to statement timeout/, 'statement_timeout ends the wait');
is(waiter_slots(), '0', '  ... and frees its slot');
start_waiter('t1', 'q');
waiting('t1');
app(q{SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 't1'});
like(output_of('t1'), qr/terminating connection due to administrator command/,
	'pg_terminate_backend ends the wait');
ok($node->poll_query_until('app', 'SELECT count(*) FROM claimqueue.waiters()', '0'),
	'  ... and frees its slot');

# --- a waiter cancelled after a commit woke it hands the wake-up on: two
# waiters, the job's commit wakes one, which is terminated before it can look;
# the job must still reach the other. Both backends are stopped (SIGSTOP) so
# the woken one cannot look before the signal arrives.
start_waiter('s1', 'q');
waiting('s1');
start_waiter('s2', 'q');
waiting('s2');
my %pid = map { $_ => app("SELECT pid FROM pg_stat_activity WHERE application_name = '$_'") } qw(s1 s2);
kill 'STOP', values %pid;
my $handed = app(q{SELECT enqueue('q', '{"handed": 1}')});
my $woken = app(q{SELECT a.application_name FROM claimqueue.waiters() w
	JOIN pg_stat_activity a USING (pid) WHERE w.wakeups = 1});
is(app('SELECT count(*) FILTER (WHERE wakeups = 1) || \' \' || count(*) FROM claimqueue.waiters()'),
	'1 2', 'one job, two stopped waiters: exactly one was woken');
my $other = $woken eq 's1' ? 's2' : 's1';
app("SELECT pg_terminate_backend($pid{$woken})");
kill 'CONT', values %pid;
like(output_of($other), qr/"id": $handed,/,
	'the woken waiter terminated before looking: the other one gets the job');

# --- await_jobs: the commits that finish the jobs wake the waiter, which
# holds no snapshot while it sleeps (the waking in every order:
# test/isolation/specs/await_jobs.spec)
app(q{SELECT create_queue('qr')});
my ($r1, $r2) = split /\n/, app(q{SELECT enqueue('qr', '{"ask": 1}'); SELECT enqueue('qr', '{"ask": 2}')});
app(q{SELECT count(*) FROM dequeue('qr', 'rw', batch => 2)});
start('a1', "CALL await_jobs('{$r1,$r2}', '60s')");
waiting('a1');
is(app(q{SELECT backend_xmin IS NULL AND backend_xid IS NULL FROM pg_stat_activity
	WHERE application_name = 'a1'}), 't',
	'a session in await_jobs() holds no snapshot and no xid while it sleeps');
is(app(q{SELECT count(*) FROM claimqueue.waiters() WHERE queue IS NULL}), '1',
	'  ... and is listed by claimqueue.waiters() with queue NULL');
app(qq{SELECT complete($r1, 1, '{"answer": 1}')});
waiting('a1');
app(qq{SELECT complete($r2, 1, '{"answer": 2}')});
like(output_of('a1'), qr/"result": \{"answer": 1\}.*"result": \{"answer": 2\}/s,
	'the commits that finish its jobs wake it, and it returns both results');
is(waiter_slots(), '0', '  ... and leaves no waiter behind');

# Woken at the commit, not before, and never by a rollback (wakeups counts
# the latch sets; a commit callback runs before the COMMIT returns).
my $r6 = app(q{SELECT enqueue('qr', '{"ask": 6}')});
app(q{SELECT count(*) FROM dequeue('qr', 'rw')});
start('a3', "CALL await_jobs('{$r6}', '60s')");
waiting('a3');
my $worker = $node->background_psql('app');
$worker->query_safe(qq{BEGIN; SELECT complete($r6, 1, '{"try": 1}')});
sub await_wakeups { return app('SELECT wakeups FROM claimqueue.waiters() WHERE queue IS NULL'); }
is(await_wakeups(), '0', 'a completion not yet committed wakes no one');
$worker->query_safe('ROLLBACK');
is(await_wakeups(), '0', '  ... nor does its rollback');
$worker->query_safe(qq{SELECT complete($r6, 1, '{"try": 2}')});
my $a3 = output_of('a3');
like($a3, qr/"result": \{"try": 2\}/, '  ... the commit that follows does, with its own result');
unlike($a3, qr/"try": 1/, '  ... not the rolled-back one');
$worker->quit;

# cancel_jobs() finishes jobs in bulk: its commit wakes their waiters too.
app(q{SELECT create_queue('qc')});
my ($r7, $r8) = split /\n/, app(q{SELECT enqueue('qc', '{}'); SELECT enqueue('qc', '{}')});
app(q{SELECT count(*) FROM dequeue('qc', 'rw')});
start('a4', "CALL await_jobs('{$r7,$r8}', '1h')");
waiting('a4');
is(app(q{SELECT cancel_jobs('qc', '{ready,running}')}), '2', 'cancel_jobs() cancels a running and a ready job');
# The commit callback has set the waiter's latch before COMMIT returned: its
# slot shows a wake-up, or is gone already ('0' would mean only its timeout
# could end the wait).
my $cancel_wakeups = await_wakeups();
isnt($cancel_wakeups, '0', "  ... whose commit woke the waiter (wakeups: '$cancel_wakeups')");
like(output_of('a4'), qr/"state": "cancelled".*"state": "cancelled"/s,
	'  ... and its commit wakes the waiter on both');

# --- claimqueue.max_waiters (4 in this cluster)
start_waiter($_, 'q') for qw(m1 m2 m3 m4);
ok($node->poll_query_until('app', 'SELECT count(*) FROM claimqueue.waiters()', '4'),
	'four waiters fill claimqueue.max_waiters = 4');
($ret, $out, $err) = $node->psql('app',
	"\\set VERBOSITY verbose\nCALL dequeue_wait('q', 'm5', wait => '1s')");
like($err, qr/53400: cannot wait on queue "q": all 4 waiter slots are taken/,
	'a fifth gets 53400, naming the setting');
is(app(q{CALL dequeue_wait('q', 'm5', wait => '0')}), '[]',
	"  ... while wait => '0' still works (claims or returns [])");
my $r5 = app(q{SELECT enqueue('qr', '{}')});
($ret, $out, $err) = $node->psql('app',
	"\\set VERBOSITY verbose\nCALL await_jobs('{$r5}', '1s')");
like($err, qr/53400: await_jobs\(\) cannot wait: all 4 waiter slots are taken/,
	'await_jobs() shares the slots with dequeue_wait(): 53400 when they are taken');
like(app(qq{CALL await_jobs('{$r5}', '0')}), qr/"state": "ready"/,
	"  ... while timeout => '0' still answers");
like(app(qq{CALL await_jobs('{$r1}', '1s')}), qr/"state": "done"/,
	'  ... and a wait for a finished job needs no slot');
app(q{SELECT count(*) FROM enqueue_batch('q', ARRAY['{}', '{}', '{}', '{}']::jsonb[])});
is(join(',', map { scalar(() = output_of($_) =~ /"id": \d+/g) } qw(m1 m2 m3 m4)), '1,1,1,1',
	'four jobs release the four waiters');
is(waiter_slots(), '0', 'and every slot is free again');

# --- grants are checked again after every sleep: a revoke that commits while
# a worker waits reaches it before its next claim (not at its next transaction)
app(q{SET client_min_messages = error;
	CREATE ROLE waiting_worker LOGIN IN ROLE claimqueue_consumer;
	SELECT create_queue('qa'); SELECT grant_queue('qa', 'consume', 'waiting_worker');
	SELECT enqueue('qa', '{"warm": 1}')});
# One claim first, so the session remembers the grant it used.
start('g1', q{SET ROLE waiting_worker; CALL dequeue_wait('qa', 'g1', wait => '0');
	CALL dequeue_wait('qa', 'g1', wait => '60s')});
waiting('g1');
app(q{SELECT revoke_queue('qa', 'consume', 'waiting_worker')});
my $secret = app(q{SELECT enqueue('qa', '{"secret": 1}')});
my $g1 = output_of('g1');
like($g1, qr/permission denied for queue "qa"/,
	'a waiter whose consume grant was revoked while it slept gets 42501 when woken');
is(app("SELECT state FROM queue_jobs WHERE id = $secret"), 'ready',
	'  ... and claimed nothing: the job is still ready');
unlike($g1, qr/secret/, '  ... its payload unseen');

# --- await_jobs() after a revoke: a waiter whose grant was revoked while it
# slept sees its job as a missing one when woken, result unseen
app(q{SET client_min_messages = error;
	CREATE ROLE requester LOGIN IN ROLE claimqueue_producer;
	SELECT grant_queue('qr', 'produce', 'requester')});
my $r3 = app(q{SELECT enqueue('qr', '{"ask": 3}')});
app(q{SELECT count(*) FROM dequeue('qr', 'rw', batch => 10)});    # with the one of the slots test
start('a2', qq{SET ROLE requester; CALL await_jobs('{$r3}', '60s')});
waiting('a2');
app(q{SELECT revoke_queue('qr', 'produce', 'requester')});
app(qq{SELECT complete($r3, 1, '{"secret": 3}')});
my $a2 = output_of('a2');
like($a2, qr/"state": null/,
	'a waiter whose produce grant was revoked while it slept is woken and sees state NULL');
unlike($a2, qr/secret/, '  ... the result unseen');

# --- DROP EXTENSION while a worker waits: it ends with claimqueue's own error
# (no internal query text, no 'relation does not exist')
app(q{SELECT create_queue('qd')});
start_waiter('x1', 'qd', '3s');
waiting('x1');
my $r4 = app(q{SELECT enqueue('qr', '{}')});
start('x2', "CALL await_jobs('{$r4}', '3s')");
waiting('x2');
app('SET client_min_messages = error; DROP EXTENSION claimqueue CASCADE');
like(output_of('x2'), qr/extension "claimqueue" was dropped while await_jobs\(\) waited/,
	"DROP EXTENSION while a session awaits jobs: the wait ends with 'extension was dropped'");
my $x1 = output_of('x1');
like($x1, qr/extension "claimqueue" was dropped while dequeue_wait\(\) waited on queue "qd"/,
	"DROP EXTENSION while a worker waits: the wait ends with 'extension was dropped'");
unlike($x1, qr/does not exist|SQL statement|PL\/pgSQL/,
	'  ... and nothing about relations or internal statements');
app(q{SET client_min_messages = error; CREATE EXTENSION claimqueue; SELECT create_queue('q')});

# --- claimqueue.max_waiters = 0 turns waiting off (shared memory: a restart)
eval { $_->quit } for values %session;    # a terminated session's psql is gone
$node->append_conf('postgresql.conf', 'claimqueue.max_waiters = 0');
$node->restart;
($ret, $out, $err) = $node->psql('app',
	"\\set VERBOSITY verbose\nCALL dequeue_wait('q', 'z', wait => '1s')");
like($err, qr/53400: cannot wait on queue "q": claimqueue.max_waiters is 0/,
	'with claimqueue.max_waiters = 0 a wait is refused with 53400, naming the setting');
is(app(q{CALL dequeue_wait('q', 'z', wait => '0')}), '[]', "  ... while wait => '0' still works");
my $z = app(q{SELECT enqueue('q', '{}')});
($ret, $out, $err) = $node->psql('app',
	"\\set VERBOSITY verbose\nCALL await_jobs('{$z}', '1s')");
like($err, qr/53400: await_jobs\(\) cannot wait: claimqueue.max_waiters is 0/,
	'  ... and so is await_jobs()');

done_testing();

# pg_dump and restore keep everything: queues (the default queue's changed
# settings included, paused and failed_retention too), jobs in every state,
# per-queue grants (to a role and to PUBLIC), schedules (a paused one too),
# lock namespaces of every key mode and registered keys (with a gap left by a
# rolled-back registration); and the restored database hands out new
# ids after the old ones (no id given twice).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'claimqueue'");
$node->start;

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('postgres', 'CREATE DATABASE dst');
$node->safe_psql('src', q{
SET client_min_messages = error;
CREATE EXTENSION claimqueue;
SELECT lock_namespace('reports'), lock_namespace('singletons', 'registered'),
       lock_namespace('shards', 'integer');
SELECT register_lock_key('singletons', 'refresh'), register_lock_key('singletons', 'rebuild');
BEGIN;
SELECT lock_namespace('rolled-back'), register_lock_key('singletons', 'rolled-back');
ROLLBACK;
SELECT lock_namespace('after-gap');
SELECT alter_queue('default', lease => '2 minutes', retention => '3 days', failed_retention => '30 days');
SELECT pause_queue('default');
SELECT create_queue('mail', max_attempts => 3, backoff_base => '5 seconds');
SELECT enqueue('mail', jsonb_build_object('n', g), priority => g % 3) FROM generate_series(1, 5) g;
SELECT enqueue('mail', '{"later": true}', run_at => now() + interval '1 day', dedup_key => 'once');
SELECT count(*) FROM dequeue('mail', 'w', 4);
SELECT complete(id, attempt) FROM claimqueue.jobs WHERE state = 'running' ORDER BY id LIMIT 1;
SELECT complete(id, attempt, '{"answer": 42}') FROM claimqueue.jobs WHERE state = 'running' ORDER BY id LIMIT 1;
SELECT fail(id, attempt, 'boom') FROM claimqueue.jobs WHERE state = 'running' ORDER BY id LIMIT 1;
SELECT cancel(5);
SELECT grant_queue('mail', 'consume', 'claimqueue_consumer'), grant_queue('mail', 'produce', 'public');
SELECT schedule('mail-yearly', '0 3 1 jan *', 'mail', '{"k": 1}', timezone => 'Europe/Berlin',
                priority => 5, catch_up => 'all'),
       schedule('default-yearly', '@yearly', 'default', enabled => false),
       schedule('mail-daily', '@daily', 'mail');
SELECT pause_schedule('mail-daily');
SELECT create_queue('held', failed_retention => '1 hour');
SELECT pause_queue('held');
});

my $dump = PostgreSQL::Test::Utils::tempdir() . '/src.sql';
$node->command_ok([ 'pg_dump', '-d', 'src', '-f', $dump ], 'pg_dump of the source database');
$node->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', 'dst', '-f', $dump ],
	'the dump restores into an empty database without an error');

# Each kind of object, in id order; last the ids handed out next, which must
# continue after the restored ones in both databases alike.
my @describe = (
	'lock namespaces' => 'SELECT row(namespace_id, name, key_mode) FROM claimqueue.lock_namespaces ORDER BY namespace_id',
	'lock keys' => 'SELECT row(key_id, namespace_id, key) FROM claimqueue.lock_keys ORDER BY key_id',
	'queues' => 'SELECT row(queue_id, name, lease, max_attempts, backoff_base, backoff_cap, retention,
	                       paused, failed_retention)
	             FROM claimqueue.queues ORDER BY queue_id',
	'jobs' => 'SELECT row(id, queue_id, state, priority, attempt, max_attempts, run_at, created_at,
	                      started_at, finished_at, lease_expires_at, worker, dedup_key, last_error, payload,
	                      result)
	           FROM claimqueue.jobs ORDER BY id',
	'grants' => 'SELECT row(queue, privilege, grantee) FROM queue_privileges ORDER BY 1',
	'schedules' => 'SELECT row(s.name, q.name, s.cron, s.timezone, s.payload, s.priority, s.max_attempts,
	                           s.catch_up, s.enabled, s.next_run_at, s.last_run_at, s.last_job_id, s.paused)
	                FROM claimqueue.schedules s JOIN claimqueue.queues q USING (queue_id) ORDER BY s.name',
	'next ids' => q{SELECT enqueue('mail');
	                SELECT create_queue('new-after-restore');
	                SELECT queue_id FROM claimqueue.queues WHERE name = 'new-after-restore';
	                SELECT lock_namespace('new-after-restore');
	                SELECT register_lock_key('singletons', 'new-after-restore');});
while (my ($kind, $query) = splice @describe, 0, 2)
{
	my $source = $node->safe_psql('src', $query);
	note "$kind:\n$source";
	is($node->safe_psql('dst', $query), $source, "the restored $kind equal the source's");
}

done_testing();

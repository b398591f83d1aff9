# queue_metrics across restarts, a prepared transaction and a full table of
# slots (room for three queues, fixed at server start): after a restart (and
# after a crash) the totals start at 0 and the reaper counts every queue's
# gauges once, from the table; a prepared transaction is counted at PREPARE,
# not again at COMMIT PREPARED; a queue that finds the table full is not
# counted (NULL in the view), the log says so once, and a dropped queue's slot
# goes to it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'claimqueue'
claimqueue.metrics_queues = 3
claimqueue.reaper_interval = '100ms'
max_prepared_transactions = 2
});
$node->start;
$node->safe_psql('postgres', 'SET client_min_messages = error; CREATE EXTENSION claimqueue');
sub sql { return $node->safe_psql('postgres', $_[0]); }

# Two queues with jobs in every live state (the default queue is the third).
sql(q{SELECT create_queue('a', lease => '1 day'); SELECT create_queue('b', lease => '1 day')});
sql(q{SELECT count(*) FROM enqueue_batch('a', array_fill('{}'::jsonb, ARRAY[7]))});
sql(q{SELECT enqueue('a', run_at => now() + interval '1 day')});
sql(q{SELECT count(*) FROM dequeue('a', 'w', batch => 3)});
sql(q{SELECT count(*) FROM enqueue_batch('b', array_fill('{}'::jsonb, ARRAY[2]))});
my $gauges = q{SELECT string_agg(queue || '=' || ready_or_scheduled || '/' || running, ' ' ORDER BY queue)
               FROM queue_metrics WHERE gauges_since IS NOT NULL};
my $expected = 'a=5/3 b=2/0 default=0/0';
ok($node->poll_query_until('postgres', $gauges, $expected), "gauges before the restart: $expected");
is(sql(q{SELECT enqueued || '/' || claimed FROM queue_metrics WHERE queue = 'a'}), '8/3',
	'totals before the restart');

for my $mode ('fast', 'immediate')
{
	$node->stop($mode);
	$node->start;
	ok($node->poll_query_until('postgres', $gauges, $expected),
		"after a restart ($mode stop), the reaper counts the gauges from the table: $expected");
	is(sql(q{SELECT enqueued || '/' || claimed FROM queue_metrics WHERE queue = 'a'}), '0/0',
		"... and the totals start at 0 ($mode stop)");
}

# A prepared transaction's changes are counted when it is prepared (COMMIT
# PREPARED runs nothing of ours); the reaper counts no gauge while one is
# prepared.
sql(q{BEGIN; SELECT enqueue('a'); PREPARE TRANSACTION 'm1'});
is(sql(q{SELECT enqueued || '/' || ready_or_scheduled FROM queue_metrics WHERE queue = 'a'}), '1/6',
	'a prepared enqueue is counted at PREPARE');
sql(q{COMMIT PREPARED 'm1'});
is(sql(q{SELECT enqueued || '/' || ready_or_scheduled FROM queue_metrics WHERE queue = 'a'}), '1/6',
	'... and not again at COMMIT PREPARED');
is(sql(q{SELECT ready_or_scheduled = ready + scheduled FROM queue_metrics JOIN queue_stats USING (queue)
         WHERE queue = 'a'}), 't', '... where the gauge agrees with the table');

# A fourth queue finds the table full: not counted, said once in the log.
sql(q{SELECT create_queue('c'); SELECT enqueue('c'); SELECT enqueue('c')});
is(sql(q{SELECT enqueued IS NULL AND ready_or_scheduled IS NULL FROM queue_metrics WHERE queue = 'c'}),
	't', 'a queue beyond claimqueue.metrics_queues shows NULL');
is(sql(q{SELECT enqueued FROM queue_metrics WHERE queue = 'a'}), '1', 'the others are still counted');
ok($node->log_contains('the table of queue metrics is full \(3 queues\)'),
	'the log says the table is full');
ok($node->log_contains('HINT:  Raise claimqueue.metrics_queues'), '... with the setting to raise');
# Once a queue is dropped, its slot goes to the waiting queue at the reaper's
# next pass, which counts it.
sql(q{SELECT drop_queue('b', force => true)});
ok($node->poll_query_until('postgres',
	q{SELECT ready_or_scheduled FROM queue_metrics WHERE queue = 'c' AND gauges_since IS NOT NULL}, '2'),
	'a dropped queue frees its slot for the next, whose gauges are counted');

$node->stop;
done_testing();

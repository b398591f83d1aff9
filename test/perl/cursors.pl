# The table of claim cursors, with room for four queues (the size is fixed at
# server start). An entry is freed when its queue is dropped, or its extension
# or database goes, so create/drop cycles never use the table up; a queue
# created after DROP and CREATE EXTENSION (ids start at 1 again) never
# inherits an old cursor; a full table is said once in the log and shown in
# claim_cursor_usage, and its queues still claim correctly.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'claimqueue'
claimqueue.claim_cursor_queues = 4
});
$node->start;

for my $db ('app', 'other')
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, 'SET client_min_messages = error; CREATE EXTENSION claimqueue');
}
sub app { return $node->safe_psql('app', $_[0]); }

# A queue that gets a cursor: created, one job enqueued and claimed.
sub queue_with_cursor
{
	my ($q, $then) = @_;
	app("SELECT create_queue('$q'); SELECT enqueue('$q', '{}'); SELECT count(*) FROM dequeue('$q', 'w');"
		  . ($then // ''));
}
my $has_cursor = "SELECT count(*) > 0 FROM claimqueue.claim_cursors() c
                  JOIN claimqueue.queues q USING (queue_id) WHERE q.name = ";

# Dropped queues give their entries back.
is(app('SELECT capacity FROM claim_cursor_usage'), '4', 'the table has room for 4 queues');
queue_with_cursor("cycle_$_", "SELECT drop_queue('cycle_$_', force => true)") for 1 .. 40;
is(app('SELECT in_use, refusals FROM claim_cursor_usage'), '0|0',
	'40 create/claim/drop cycles leave no entry in use');
queue_with_cursor('after_cycles');
is(app("$has_cursor 'after_cycles'"), 't', 'a queue created after them still gets a cursor');

# A full table: four queues hold the entries, a fifth claims without a
# cursor, correctly, and the log says so once.
queue_with_cursor($_) for qw(f1 f2 f3);
is(app('SELECT in_use FROM claim_cursor_usage'), '4', 'four queues fill the table');
app(q{SELECT create_queue('f5'); SELECT count(*) FROM enqueue_batch('f5', array_fill('{}'::jsonb, ARRAY[5]))});
is(app(q{SELECT count(*) FROM dequeue('f5', 'w', 3)}), '3', 'a fifth queue claims without a cursor, correctly');
app(q{SELECT count(*) FROM dequeue('f5', 'w'); SELECT count(*) FROM dequeue('f5', 'w')});
is(app('SELECT refusals > 0 FROM claim_cursor_usage'), 't', 'claim_cursor_usage counts the refusals');
my @full = slurp_file($node->logfile) =~ /the table of claim cursors is full \(4 queues\)/g;
is(scalar @full, 1, '... the log says it exactly once');
ok($node->log_contains('HINT:  Raise claimqueue.claim_cursor_queues'),
	'... with the hint to raise claimqueue.claim_cursor_queues');
app(q{SELECT drop_queue('f1', force => true)});
app(q{SELECT enqueue('f5', '{}'); SELECT count(*) FROM dequeue('f5', 'w')});
is(app("$has_cursor 'f5'"), 't', 'once a queue is dropped, the fifth gets the freed entry');
is(app('SELECT count(*) FROM claimqueue.check_claim_cursors()'), '0', 'and its lanes are sound');

# DROP EXTENSION frees the database's entries; the re-created extension's
# queues (ids from 1 again) start with fresh cursors, not the old ones.
app(q{SELECT drop_queue(name, force => true) FROM claimqueue.queues WHERE name <> 'default'});
app(q{SELECT count(*) FROM enqueue_batch('default', array_fill('{}'::jsonb, ARRAY[50]));
      SELECT count(*) FROM dequeue('default', 'w', 40)});
isnt(app('SELECT cursor FROM claimqueue.claim_cursors() WHERE queue_id = 1 AND priority = 0'),
	'', 'the default queue (id 1) has a cursor');
app('SET client_min_messages = error; DROP EXTENSION claimqueue CASCADE');
is($node->safe_psql('other', 'SELECT in_use FROM claim_cursor_usage'), '0', 'DROP EXTENSION frees its entries');
app('SET client_min_messages = error; CREATE EXTENSION claimqueue');
is(app('SELECT count(*) FROM claimqueue.claim_cursors() WHERE queue_id = 1'), '0',
	"the re-created extension's queue 1 has no lanes before its first claim");
app(q{SELECT enqueue('default', '{}')});
is(app(q{SELECT count(*) FROM dequeue('default', 'w')}), '1', 'its first job is claimed');
is(app('SELECT count(*) FROM claimqueue.check_claim_cursors()'), '0',
	'and its cursor is its own (invariants hold)');

# DROP DATABASE frees the entries of its queues.
$node->safe_psql('other', q{SELECT enqueue('default', '{}'); SELECT count(*) FROM dequeue('default', 'w')});
is(app('SELECT in_use FROM claim_cursor_usage'), '2', 'the other database has an entry');
$node->safe_psql('postgres', 'DROP DATABASE other');
is(app('SELECT in_use FROM claim_cursor_usage'), '1', 'DROP DATABASE frees it');

unlike(slurp_file($node->logfile), qr/\b(ERROR|PANIC):/, 'nothing at ERROR in the server log');

done_testing();

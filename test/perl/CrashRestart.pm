# Waiting for a server that a SIGKILL of one of its processes restarts.
#
# PostgreSQL::Test::Cluster's poll_query_until feeds its query to psql's
# standard input. While the postmaster restarts after a crash it refuses
# connections, and a psql it refuses exits before reading its input, so the
# write fails with EPIPE and IPC::Run dies ("ack Broken pipe"), taking the
# test script with it. poll_after_crash passes the query with -c instead, so
# a refused connection is one more failed try.
package CrashRestart;

use strict;
use warnings;
use Exporter 'import';
use IPC::Run;
use PostgreSQL::Test::Utils;
use Time::HiRes qw(usleep);

our @EXPORT = qw(poll_after_crash);

# poll_after_crash(NODE, DB, QUERY, EXPECTED): true once QUERY in DB on NODE
# prints EXPECTED ('t' if omitted) with nothing on stderr; false after the
# framework's default timeout.
sub poll_after_crash
{
	my ($node, $db, $query, $expected) = @_;
	$expected //= 't';
	my @cmd = ('psql', '-XAt', '-d', $node->connstr($db), '-c', $query);
	for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		my ($stdout, $stderr) = ('', '');
		IPC::Run::run(\@cmd, '<', '/dev/null', '>', \$stdout, '2>', \$stderr);
		chomp $stdout;
		return 1 if $stdout eq $expected && $stderr eq '';
		usleep(100_000);
	}
	return 0;
}

1;

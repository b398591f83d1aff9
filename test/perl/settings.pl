# The table of docs/settings.md is the documentation of record: every
# claimqueue.* setting the server defines has a row with its default, and
# every row names a setting the server defines. Preload-only settings exist
# only with the library preloaded, so the server here preloads it.
use strict;
use warnings;
use FindBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'claimqueue'");
$node->start;

# name => default, as the table spells it (the default as SHOW prints it).
my %documented;
for (split /\n/, slurp_file("$FindBin::RealBin/../../docs/settings.md"))
{
	next unless /^\| `(claimqueue\.[^`]+)` \|([^|]*)\|/;
	my ($name, $default) = ($1, $2);
	$default =~ s/[` ]//g;
	$documented{$name} = $default;
}
# The same from the server: pg_settings for the names, SHOW in a session that
# set nothing for the defaults.
my %server;
for my $name (split /\n/,
	$node->safe_psql('postgres',
		"SELECT name FROM pg_settings WHERE name LIKE 'claimqueue.%' ORDER BY name"))
{
	$server{$name} = $node->safe_psql('postgres', "SHOW $name");
}
note 'docs/settings.md: ' . keys(%documented) . ' settings; server: ' . keys(%server);

# The table is found and parsed (a parser that reads nothing proves nothing).
cmp_ok(scalar keys %documented, '>=', 8, "docs/settings.md's table lists settings");
is_deeply([ grep { !exists $documented{$_} } sort keys %server ],
	[], 'every setting the server defines has a row');
is_deeply([ grep { !exists $server{$_} } sort keys %documented ],
	[], 'every row names a setting the server defines');
is_deeply(\%documented, \%server, 'every default in the table is the server\'s');

# The reserved prefix: a setting claimqueue does not define is refused.
my ($ret, $stdout, $stderr) =
  $node->psql('postgres', 'SET claimqueue.no_such_setting = 1');
like($stderr, qr/invalid configuration parameter name/,
	'the claimqueue. prefix is reserved');

done_testing();

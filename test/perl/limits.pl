# Concurrency limits across an immediate stop and restart: the running counts
# a claim checks come from the jobs themselves (committed state), not from
# shared memory, so the limits hold after a crash exactly as before it. A
# claim in progress at the crash is rolled back and frees nothing it did not
# hold; committed claims still count.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('limits');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'claimqueue'
claimqueue.reaper_interval = '1h'
});
$node->start;
sub app { return $node->safe_psql('app', $_[0]); }
$node->safe_psql('postgres', 'CREATE DATABASE app');
app('SET client_min_messages = error; CREATE EXTENSION claimqueue');
app(q{SELECT create_queue('lim', lease => '1 hour', max_running => 5, max_running_per_key => 2)});
# Six jobs of each of a, b and c, in that order (ids 1-6 a, 7-12 b, 13-18 c).
app(q{SELECT enqueue('lim', '{}', concurrency_key => k) FROM unnest(ARRAY['a', 'b', 'c']) k,
      generate_series(1, 6)});

my $running = q{SELECT coalesce(string_agg(concurrency_key || '=' || n, ',' ORDER BY concurrency_key), '')
  FROM (SELECT concurrency_key, count(*) n FROM queue_jobs
         WHERE queue = 'lim' AND state = 'running' GROUP BY 1) r};

# Committed: two of a, two of b (a batch of 4 stops at each key's limit).
is(app(q{SELECT count(*) FROM dequeue('lim', 'before', batch => 4)}), '4', 'four claims committed');
is(app($running), 'a=2,b=2', 'a and b at their limit before the crash');

# A claim in progress at the crash: c's first job, never committed.
my $open = $node->background_psql('app');
$open->query_safe('BEGIN');
is($open->query_safe(q{SELECT id FROM dequeue('lim', 'in-flight')}), '13', 'a claim in progress takes a job of c');

$node->stop('immediate');
$open->quit;
$node->start;

is(app($running), 'a=2,b=2', 'after the restart the committed claims still run; the open claim is gone');
is(app(q{SELECT state FROM claimqueue.jobs WHERE id = 13}), 'ready', 'the claim in progress was rolled back');

# max_running 5 with 4 running: one more, of c (a and b are full).
is(app(q{SELECT string_agg(id::text, ',') FROM dequeue('lim', 'after', batch => 10)}), '13',
   'after the restart a batch of 10 takes one job: the queue is at max_running');
is(app(q{SELECT count(*) FROM dequeue('lim', 'after', batch => 10)}), '0', 'then nothing');

# A completion frees one slot of the queue and of its key.
app(q{SELECT complete(1, 1)});
is(app(q{SELECT string_agg(id::text, ',') FROM dequeue('lim', 'after', batch => 10)}), '3',
   'a completed job of a frees one slot, taken by the next job of a');
is(app($running), 'a=2,b=2,c=1', 'never above either limit');

# Raise max_running: the per-key limit still holds (c can take one more).
app(q{SELECT alter_queue('lim', max_running => 100)});
is(app(q{SELECT string_agg(id::text, ',') FROM dequeue('lim', 'after', batch => 10)}), '14',
   'with max_running raised, only the per-key limit holds back');
is(app($running), 'a=2,b=2,c=2', 'every key at its limit');

$node->stop;
done_testing();

# Each workload's jobs/s beside its commit-rate ceiling, one bar per system, a
# row of panels per commit mode. The ceiling of a workload that commits once
# (twice) per job is the loops/s of a loop of one (two) single-row INSERT
# commits: what the workload would reach if its commits were all it cost. A
# batch of 100 commits twice per 100 jobs, so its ceiling is far above it and
# not drawn. Called by bench/charts.sh with the data it pivots from results.csv:
#   gnuplot -e "dir='DIR'; cols='ceiling plain claimqueue floor'; bcols='plain claimqueue floor';
#               outfile='x-ceilings.svg'; subtitle='...'" ceilings.gp
# DIR holds single-off.dat, single-on.dat, batch-off.dat, batch-on.dat: a
# quoted workload name, then one column per word of cols (bcols), "?" where a
# system has no row.
set terminal svg size 900,640 dynamic font 'sans,12' background '#ffffff'
set output outfile
set datafile missing '?'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set yrange [0:*]
set ytics nomirror
set xtics nomirror scale 0
set grid ytics lc rgb '#dddddd'
set border 3
set format y '%.0f'
name(m) = (m eq 'ceiling' ? 'ceiling (empty commits)' : m eq 'plain' ? 'plain SKIP LOCKED' : m eq 'pgmq' ? 'PGMQ' : m eq 'floor' ? 'row writes alone' : m)
color(m) = (m eq 'ceiling' ? '#b0b0b0' : m eq 'claimqueue' ? '#1b6ac9' : m eq 'plain' ? '#d9534f' : m eq 'floor' ? '#f0ad4e' : m eq 'pgmq' ? '#3c9a3c' : '#777777')
# Two rows (commit modes); the workloads of one job per loop on the left, the
# batch on the right; one key for all, under the panels.
panel(l, r, b, t) = sprintf("set lmargin at screen %f; set rmargin at screen %f; set bmargin at screen %f; set tmargin at screen %f", l, r, b, t)
set multiplot title "Jobs per second of each workload, beside its commit-rate ceiling\n".subtitle
set ylabel 'jobs/s'
set key at screen 0.5, 0.015 center bottom horizontal maxrows 1 font ',11'
eval panel(0.08, 0.66, 0.55, 0.86)
set title 'commits not flushed (synchronous\_commit = off)'
plot for [i=1:words(cols)] dir.'/single-off.dat' using (column(i + 1)):xtic(1) title name(word(cols, i)) lc rgb color(word(cols, i))
set key off
eval panel(0.08, 0.66, 0.12, 0.43)
set title 'durable commits (synchronous\_commit = on)'
plot for [i=1:words(cols)] dir.'/single-on.dat' using (column(i + 1)):xtic(1) title name(word(cols, i)) lc rgb color(word(cols, i))
unset ylabel
eval panel(0.75, 0.98, 0.55, 0.86)
set title 'batch of 100, not flushed'
plot for [i=1:words(bcols)] dir.'/batch-off.dat' using (column(i + 1)):xtic(1) title name(word(bcols, i)) lc rgb color(word(bcols, i))
eval panel(0.75, 0.98, 0.12, 0.43)
set title 'batch of 100, durable'
plot for [i=1:words(bcols)] dir.'/batch-on.dat' using (column(i + 1)):xtic(1) title name(word(bcols, i)) lc rgb color(word(bcols, i))
unset multiplot

# Held-snapshot probe: jobs completed per second in each 10-s window, one line
# per system, while another session holds a REPEATABLE READ snapshot.
# Called by bench/charts.sh:
#   gnuplot -e "infile='x-held.csv'; outfile='x-held.svg'; impls='claimqueue plain'; subtitle='...'" held.gp
# Columns of infile (bench/inner.sh, windows.csv): impl,window_no,t_s,jobs,
#   jobs_per_s,consumer_tps,consumer_lat_ms,producer_tps,backlog_ready,
#   dead_tuples,table_mb
set datafile separator ','
set terminal svg size 760,420 dynamic font 'sans,12' background '#ffffff'
set output outfile
set title "Throughput while another session holds an old snapshot\n".subtitle
set xlabel 'seconds since the snapshot was taken'
set ylabel 'jobs completed per second (10-s windows)'
set xrange [0:*]
set yrange [0:*]
set key outside bottom center horizontal
set grid ytics lc rgb '#dddddd'
set border 3
set xtics nomirror
set ytics nomirror
name(m) = (m eq 'claimqueue' ? 'claimqueue' : m eq 'plain' ? 'plain SKIP LOCKED queue' : m eq 'pgmq' ? 'PGMQ' : m)
color(m) = (m eq 'claimqueue' ? '#1b6ac9' : m eq 'plain' ? '#d9534f' : m eq 'pgmq' ? '#3c9a3c' : '#777777')
plot for [m in impls] infile using (stringcolumn(1) eq m ? $3 : NaN):5 \
     with linespoints lw 2 pt 7 ps 0.6 lc rgb color(m) title name(m)

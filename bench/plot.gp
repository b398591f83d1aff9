# Held-snapshot probe: jobs/s per window for claimqueue and the plain baseline,
# and the ready backlog (right axis). Called by run.sh:
#   gnuplot -e "infile='x-held.csv'; outfile='x-held.png'; title='...'" plot.gp
# Columns of infile: impl,window_no,t_s,jobs,jobs_per_s,consumer_tps,
#   consumer_lat_ms,producer_tps,backlog_ready,dead_tuples,table_mb
set datafile separator ','
set terminal pngcairo size 900,500 noenhanced font 'sans,10'
set output outfile
set title title
set xlabel 'seconds since the holder took its xid and the load started'
set ylabel 'jobs completed per second (10-s windows)'
set y2label 'ready backlog (jobs)'
set ytics nomirror
set y2tics
set xrange [0:*]
set yrange [0:*]
set y2range [0:*]
set key outside bottom center horizontal
set grid ytics
plot infile using (stringcolumn(1) eq 'claimqueue' ? $3 : NaN):5 with linespoints lw 2 pt 7 title 'claimqueue jobs/s', \
     infile using (stringcolumn(1) eq 'plain' ? $3 : NaN):5 with linespoints lw 2 pt 5 title 'plain SKIP LOCKED jobs/s', \
     infile using (stringcolumn(1) eq 'claimqueue' ? $3 : NaN):9 axes x1y2 with lines dt 2 title 'claimqueue backlog', \
     infile using (stringcolumn(1) eq 'plain' ? $3 : NaN):9 axes x1y2 with lines dt 3 title 'plain backlog'

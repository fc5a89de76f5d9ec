# Time per iteration of each epoch of one run per architecture; the first
# epoch (warm-up, open symbol) is left out of every summary.
load "common.gp"
series = data("epochs")
stats series using 4 nooutput
blocks = STATS_blocks
last_epoch = STATS_max
array b_title[blocks]
do for [i=1:blocks] {
  stats series index (i-1) every ::0::0 using (b_title[i] = strcol(3), 0) nooutput
}
do for [format in "svg png"] {
  eval terminal(format, 760, 480)
  set output ARG1.".".format
  set title "Time per iteration, epoch by epoch (epoch 1 is warm-up)"
  set xlabel "epoch"
  set ylabel "ms per iteration (epoch mean)"
  set xrange [0.5:last_epoch + 0.5]
  set xtics 1
  set yrange [0:*]
  set key outside right top font ",9"
  plot for [i=1:blocks] series index (i-1) using 4:5 with lines lc rgb colour(i) lw 1.5 title b_title[i], \
       for [i=1:blocks] series index (i-1) using 4:($6 == 1 ? $5 : NaN) with points lc rgb colour(i) pt 6 ps 1.4, \
       for [i=1:blocks] series index (i-1) using 4:($6 == 1 ? NaN : $5) with points lc rgb colour(i) pt 7 ps 0.8
  set output
}

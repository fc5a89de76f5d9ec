# Where an iteration's time goes, measured beside the corrected+overlap
# model, with overlap off and on: compute, update, exposed communication
# (on the critical path) and hidden communication (behind the backward
# pass), stacked.
load "common.gp"
bars = data("bars")
stats bars using 3 nooutput
count = STATS_records
do for [format in "svg png"] {
  eval terminal(format, 200 + 34 * count, 600)
  set output ARG1.".".format
  set title "Time per iteration: measured and modelled, overlap off and on"
  set style data histograms
  set style histogram rowstacked
  set style fill solid 0.85 border rgb "#666666"
  set boxwidth 0.75
  set ylabel "ms per iteration"
  set xtics rotate by -50 left font ",8"
  set yrange [0:*]
  set bmargin 16
  set key outside top center horizontal font ",9"
  set rmargin 22  # room for the last rotated label
  plot bars using 3:xtic(2) lc rgb "#1b6ca8" title "compute", \
       '' using 4 lc rgb "#2a9d8f" title "update", \
       '' using 5 lc rgb "#d1495b" title "exposed communication", \
       '' using 6 lc rgb "#e9a03b" title "hidden communication"
  set output
}

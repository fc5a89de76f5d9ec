# Where an iteration's time goes, with overlap off and on: compute, update,
# exposed communication (on the critical path) and hidden communication
# (behind the backward pass), stacked; for each, the measured bar (solid)
# touching the corrected+overlap model's (pale). Configurations side by
# side, each named under its two pairs of bars.
load "common.gp"
bars = data("bars")
stats bars using 7 nooutput
pairs = int(STATS_max)
array pair_scheme[pairs]
array pair_configuration[pairs]
stats bars using (g = int(column(7)), pair_scheme[g] = strcol(8), pair_configuration[g] = strcol(9), 0) nooutput

# Where the bars of pair g, overlap off (0) or on (1), stand; the measured
# bar to the left, the model's to the right.
slot(g, on) = 2.6 * (g - 1) + on
bar_x(g, on, modelled) = slot(g, on) + (modelled ? 0.2 : -0.2)
x_of(g, overlap, source) = bar_x(g, overlap eq "on", source eq "model")
array component_colour[4] = ["#1b6ca8", "#2a9d8f", "#d1495b", "#e9a03b"]
array component_title[4] = ["compute", "update", "exposed communication", "hidden communication"]
# The bottom and top of component k (1-4) of a row: columns 3-6 stacked.
bottom(k) = (k > 1 ? $3 : 0) + (k > 2 ? $4 : 0) + (k > 3 ? $5 : 0)
top(k) = bottom(k) + column(k + 2)

width = 160 + 180 * pairs
do for [format in "svg png"] {
  eval terminal(format, width, 560)
  set output ARG1.".".format
  set title "Time per iteration, overlap off and on: measured (solid) and corrected+overlap model (pale)" offset 0, 2.2
  set lmargin at screen 70.0 / width; set rmargin at screen 1 - 20.0 / width
  set tmargin at screen 1 - 80.0 / 560; set bmargin at screen 100.0 / 560
  set key at screen 0.5, 1 - 38.0 / 560 center top horizontal font ",9" samplen 2 noautotitle
  set ylabel "ms per iteration"
  set yrange [0:*]
  set xrange [slot(1, 0) - 0.7:slot(pairs, 1) + 0.7]
  set xtics () scale 0 nomirror font ",9"
  set ytics nomirror
  set grid ytics
  do for [g=1:pairs] {
    set xtics add ("off" slot(g, 0), "on" slot(g, 1))
    set label g pair_scheme[g]."\n".pair_configuration[g] at first (slot(g, 0) + slot(g, 1)) / 2.0, graph -0.1 \
        center front font ",8"
  }
  plot for [k=1:4] bars using (x_of($7, strcol(10), strcol(11))):(0):(x_of($7, strcol(10), strcol(11)) - 0.2): \
         (x_of($7, strcol(10), strcol(11)) + 0.2):(strcol(11) eq "model" ? NaN : bottom(k)):(top(k)) \
         with boxxyerror fs solid 0.9 border rgb "#555555" lc rgb component_colour[k] title component_title[k], \
       for [k=1:4] bars using (x_of($7, strcol(10), strcol(11))):(0):(x_of($7, strcol(10), strcol(11)) - 0.2): \
         (x_of($7, strcol(10), strcol(11)) + 0.2):(strcol(11) eq "model" ? bottom(k) : NaN):(top(k)) \
         with boxxyerror fs transparent solid 0.35 border rgb "#555555" lc rgb component_colour[k]
  unset label
  set output
}

# The schemes side by side, one panel per network (from the slowest), on
# one log axis shared by every panel, so that their order on each network,
# and whether it changes from one to the other, reads off the picture: each
# scheme's measured median throughput (its colour and marker; 95% interval
# bars) joined across worker counts, and the corrected model's prediction
# as a thin dashed line of the same colour. One key, beside the panels.
load "common.gp"
measured = data("measured")
model = data("model")
with_model = has("model")

# Each block's network (column 2) and scheme (column 4), and their titles.
stats measured using 2 nooutput
networks = int(STATS_max)
blocks = STATS_blocks
stats measured using 4 nooutput
schemes = int(STATS_max)
array b_network[blocks]
array b_scheme[blocks]
array network_title[networks]
array scheme_title[schemes]
do for [s=1:schemes] { scheme_title[s] = "" }
do for [i=1:blocks] {
  stats measured index (i-1) every ::0::0 \
      using (b_network[i] = int(column(2)), network_title[int(column(2))] = strcol(3), \
             b_scheme[i] = int(column(4)), scheme_title[int(column(4))] = strcol(5), 0) nooutput
}
model_blocks = 0
if (with_model) { stats model using 2 nooutput; model_blocks = STATS_blocks }
array m_network[model_blocks + 1]
array m_scheme[model_blocks + 1]
do for [i=1:model_blocks] {
  stats model index (i-1) every ::0::0 using (m_network[i] = int(column(2)), m_scheme[i] = int(column(3)), 0) nooutput
}

# One range for every panel: the workers, and every positive throughput
# (medians, intervals, predictions) widened by a fifth on the log axis.
stats measured using 6 nooutput
x_low = STATS_min; x_high = STATS_max
stats measured using ($8 > 0 ? $8 : NaN) nooutput
y_low = STATS_min
stats measured using 9 nooutput
y_high = STATS_max
if (with_model) {
  stats model using ($5 > 0 ? $5 : NaN) nooutput
  y_low = STATS_min < y_low ? STATS_min : y_low; y_high = STATS_max > y_high ? STATS_max : y_high
}
y_low = y_low / 1.2; y_high = y_high * 1.2

array scheme_point[8] = [7, 5, 9, 11, 13, 15, 4, 6]
point(s) = scheme_point[(int(s) - 1) % 8 + 1]
pale(rgb) = "#80" . rgb[2:7]  # the colour, half transparent

# The grid, in pixels: the panels side by side, then the key.
plot_w = 380; left_w = 80; gap_w = 30; key_w = 230; top_h = 64; plot_h = 400; bottom_h = 50
width = left_w + networks * plot_w + (networks - 1) * gap_w + key_w; height = top_h + plot_h + bottom_h
x(px) = px / (1.0 * width)
y(px) = 1 - px / (1.0 * height)

do for [format in "svg png"] {
  eval terminal(format, width, height)
  set output ARG1.".".format
  set multiplot title "Training throughput per network: the schemes side by side (shared axis)"
  set border 31 lc rgb "#444444"
  set grid back lc rgb "#dddddd"
  set logscale y
  set ytics nomirror ()
  do for [e=0:8] { set ytics add (10**e, 2 * 10**e, 5 * 10**e) }
  set format y "%.0s%c"
  set xtics 1 nomirror
  set xrange [x_low - 0.3:x_high + 0.3]
  set yrange [y_low:y_high]
  set xlabel "workers" offset 0, 0.5
  unset key
  do for [n=1:networks] {
    left = left_w + (n - 1) * (plot_w + gap_w)
    set lmargin at screen x(left); set rmargin at screen x(left + plot_w)
    set tmargin at screen y(top_h); set bmargin at screen y(top_h + plot_h)
    set title network_title[n] offset 0, -0.4
    set ylabel (n == 1 ? "samples / s" : "") offset 1, 0
    set format y (n == 1 ? "%.0s%c" : "")
    if (model_blocks > 0) {
      plot for [i=1:model_blocks] model index (i-1) using (m_network[i] == n ? $4 : NaN):5 \
             with lines lc rgb pale(colour(m_scheme[i])) dt 2 lw 1.5, \
           for [i=1:blocks] measured index (i-1) using (b_network[i] == n ? $6 : NaN):7:8:9 \
             with yerrorlines lc rgb colour(b_scheme[i]) pt point(b_scheme[i]) ps 0.9 lw 2
    } else {
      plot for [i=1:blocks] measured index (i-1) using (b_network[i] == n ? $6 : NaN):7:8:9 \
             with yerrorlines lc rgb colour(b_scheme[i]) pt point(b_scheme[i]) ps 0.9 lw 2
    }
  }
  # The key: one entry per scheme, then what a line means.
  set lmargin at screen x(width - key_w + 10); set rmargin at screen 1
  set tmargin at screen y(top_h); set bmargin at screen y(top_h + plot_h)
  unset border; unset tics; unset xlabel; unset ylabel; unset title; unset grid; unset logscale
  set xrange [0:1]; set yrange [0:1]
  set key at screen x(width - key_w + 10), y(top_h) left top Left reverse samplen 2.5 spacing 1.3 font ",10"
  plot for [s=1:schemes] NaN with linespoints lc rgb colour(s) pt point(s) ps 0.9 lw 2 title scheme_title[s], \
       NaN with points lc rgb "#ffffff" title " ", \
       NaN with yerrorbars lc rgb "#333333" pt 7 ps 0.9 title "median, 95% interval", \
       NaN with lines lc rgb "#999999" dt 2 lw 1.5 title (model_blocks > 0 ? "corrected model" : "")
  unset multiplot
  set output
}

# Predicted against measured epoch time on log-log axes, one panel per
# model (small multiples, the same axes in every panel): the primary model,
# corrected, first, then the others in models.h's order. In each, one point
# per configuration, calibration as open circles and validation as filled
# triangles, over y = x and the bands of 5% and 10% error.
load "common.gp"
points = data("points")
stats points using 6 nooutput
low = STATS_min
high = STATS_max
blocks = STATS_blocks
stats points using 7 nooutput
low = (STATS_min < low ? STATS_min : low) / 1.3
high = (STATS_max > high ? STATS_max : high) * 1.3
array b_model[blocks]
array b_split[blocks]
array model_title[5] = ["", "", "", "", ""]
do for [i=1:blocks] {
  stats points index (i-1) every ::0::0 \
      using (b_model[i] = int(column(2)), b_split[i] = column(4), model_title[int(column(2))] = strcol(3), 0) nooutput
}
# Each model's blocks (the data is sorted by model): first and last.
array m_first[5] = [1, 1, 1, 1, 1]
array m_last[5] = [0, 0, 0, 0, 0]
do for [i=blocks:1:-1] { m_first[b_model[i]] = i }
do for [i=1:blocks] { m_last[b_model[i]] = i }
# The panels: the models present, corrected (2) first.
primary = 2
array panel_model[5]
panels = 0
do for [m in "2 1 3 4 5"] {
  if (model_title[int(m)] ne "") { panels = panels + 1; panel_model[panels] = int(m) }
}
columns = panels < 3 ? panels : 3
rows = (panels + columns - 1) / columns

plot_w = 280; left_w = 70; right_w = 20; title_h = 34; plot_h = 280; tics_h = 50; head_h = 40; key_h = 30
column_w = left_w + plot_w + right_w; row_h = title_h + plot_h + tics_h
width = column_w * columns; height = head_h + key_h + row_h * rows
x(px) = px / (1.0 * width)
y(px) = 1 - px / (1.0 * height)

do for [format in "svg png"] {
  eval terminal(format, width, height)
  set output ARG1.".".format
  set multiplot title "Predicted against measured epoch time, one panel per model (shared axes)"
  # The key, once, above the panels.
  set lmargin at screen 0; set rmargin at screen 1
  set tmargin at screen y(head_h); set bmargin at screen y(head_h + key_h)
  unset border; unset tics; unset xlabel; unset ylabel; unset title; unset grid; unset logscale
  set xrange [0:1]; set yrange [0:1]
  set key at screen 0.5, y(head_h) center top horizontal Left reverse samplen 2 font ",9" width 2
  plot NaN with points lc rgb "#444444" pt 6 ps 1.1 title "calibration", \
       NaN with points lc rgb "#444444" pt 9 ps 1.1 title "validation", \
       NaN with lines lc rgb "#444444" title "y = x", \
       NaN with filledcurves fc rgb "#d8d8d8" title "±5%", \
       NaN with filledcurves fc rgb "#eeeeee" title "±10%"
  unset key
  set border 31 lc rgb "#444444"
  set grid back lc rgb "#dddddd"
  set tics
  set xtics nomirror
  set ytics nomirror
  set logscale xy
  set xrange [low:high]
  set yrange [low:high]
  set samples 200
  do for [k=1:panels] {
    m = panel_model[k]
    c = (k - 1) % columns + 1; r = (k - 1) / columns + 1
    left = (c - 1) * column_w + left_w; top = head_h + key_h + (r - 1) * row_h + title_h
    set lmargin at screen x(left); set rmargin at screen x(left + plot_w)
    set tmargin at screen y(top); set bmargin at screen y(top + plot_h)
    set title (m == primary ? model_title[m]." (the primary model)" : model_title[m]) offset 0, -0.4
    set xlabel "measured epoch time (s)" offset 0, 0.5
    set ylabel (c == 1 ? "predicted epoch time (s)" : "") offset 1, 0
    plot '+' using 1:(0.9 * $1):(1.1 * $1) with filledcurves fc rgb "#eeeeee", \
         '+' using 1:(0.95 * $1):(1.05 * $1) with filledcurves fc rgb "#d8d8d8", \
         x with lines lc rgb "#444444", \
         for [i=m_first[m]:m_last[m]] points index (i-1) using 6:7 with points \
           lc rgb model_colour[m] pt (b_split[i] == 1 ? 6 : 9) ps 1.1
  }
  unset multiplot
  set output
}

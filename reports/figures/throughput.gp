# Throughput against workers, one panel per architecture and network (rows:
# architectures, columns: networks), on one log axis shared by every panel:
# each series' measured median with its 95% interval (points and bars), the
# primary model's prediction (corrected: a solid line in the series' colour)
# and the other models' faded behind it (thin, pale, one dash pattern each),
# and the bound (a wide pale line in the series' colour: compute plus link
# time, which no run can beat). The series of a panel are named in a key
# beside it; the line styles in one key above the panels.
load "common.gp"
measured = data("measured")
models = data("models")
bound = data("bound")

# Each block's panel (column 2) and series (column 4), each panel's title
# and place (columns 3, 10 and 11), and per panel the range of blocks it
# holds (the data is sorted by panel). Arrays get one slot at least and
# start at 0: an empty iteration in `plot` is still evaluated once, so every
# element below also checks that its block belongs to the panel.
stats measured using 2 nooutput
panels = int(STATS_max)
blocks = STATS_blocks
array panel_title[panels]
array panel_row[panels]
array panel_column[panels]
array m_panel[blocks]
array m_series[blocks]
array m_title[blocks]
do for [i=1:blocks] {
  stats measured index (i-1) every ::0::0 \
      using (p = int(column(2)), m_panel[i] = p, panel_title[p] = strcol(3), panel_row[p] = column(10), \
             panel_column[p] = column(11), m_series[i] = column(4), m_title[i] = strcol(5), 0) nooutput
}
# Each panel's workers, from the fewest to the most.
array x_low[panels]
array x_high[panels]
do for [p=1:panels] { x_low[p] = 1e9; x_high[p] = -1e9 }
do for [i=1:blocks] {
  stats measured index (i-1) using 6 nooutput
  p = int(m_panel[i])
  x_low[p] = STATS_min < x_low[p] ? STATS_min : x_low[p]; x_high[p] = STATS_max > x_high[p] ? STATS_max : x_high[p]
}
stats measured using 10 nooutput
rows = int(STATS_max)
stats measured using 11 nooutput
columns = int(STATS_max)
longest_title = 0
do for [i=1:blocks] { longest_title = strlen(m_title[i]) > longest_title ? strlen(m_title[i]) : longest_title }

model_blocks = 0
if (has("models")) { stats models using 2 nooutput; model_blocks = STATS_blocks }
array p_panel[model_blocks + 1]
array p_series[model_blocks + 1]
array p_model[model_blocks + 1]
do for [i=1:model_blocks + 1] { p_panel[i] = 0; p_series[i] = 0; p_model[i] = 1 }
# The models present, by their order (models.h's), for the key above.
array model_title[5] = ["", "", "", "", ""]
do for [i=1:model_blocks] {
  stats models index (i-1) every ::0::0 \
      using (p_panel[i] = column(2), p_series[i] = column(3), p_model[i] = column(4), \
             model_title[int(column(4))] = strcol(5), 0) nooutput
}
bound_blocks = 0
if (has("bound")) { stats bound using 2 nooutput; bound_blocks = STATS_blocks }
array b_panel[bound_blocks + 1]
array b_series[bound_blocks + 1]
do for [i=1:bound_blocks + 1] { b_panel[i] = 0; b_series[i] = 0 }
do for [i=1:bound_blocks] {
  stats bound index (i-1) every ::0::0 using (b_panel[i] = column(2), b_series[i] = column(3), 0) nooutput
}
# Per panel: first and last block of each data set (1 and 1 when none).
array m_first[panels]
array m_last[panels]
array p_first[panels]
array p_last[panels]
array b_first[panels]
array b_last[panels]
do for [p=1:panels] {
  m_first[p] = 1; m_last[p] = 1; p_first[p] = 1; p_last[p] = 1; b_first[p] = 1; b_last[p] = 1
  found = 0
  do for [i=1:blocks] { if (m_panel[i] == p) { if (!found) { m_first[p] = i; found = 1 }; m_last[p] = i } }
  found = 0
  do for [i=1:model_blocks] { if (p_panel[i] == p) { if (!found) { p_first[p] = i; found = 1 }; p_last[p] = i } }
  found = 0
  do for [i=1:bound_blocks] { if (b_panel[i] == p) { if (!found) { b_first[p] = i; found = 1 }; b_last[p] = i } }
}

# One range for every panel, so that panels compare at a glance: every
# positive value (median, interval, predictions, bound), widened by a fifth
# on the log axis. A data set with no such value leaves STATS_min undefined.
positive(v) = v > 0 ? v : NaN
low = 1e300; high = 0
do for [value in "measured:7 measured:8 measured:9 models:7 bound:5"] {
  name = value[1:strstrt(value, ":") - 1]
  if (name eq "measured" || has(name)) {
    undefine STATS_*
    stats data(name) using (positive(column(int(value[strstrt(value, ":") + 1:])))) nooutput
    if (exists("STATS_min")) {
      low = STATS_min < low ? STATS_min : low; high = STATS_max > high ? STATS_max : high
    }
  }
}
y_low = low / 1.2; y_high = high * 1.2

# The grid, in pixels: a column is the plot, then its key; a row the
# panel's title, the plot and the tics below it.
plot_w = 300; key_w = 60 + 7 * longest_title; left_w = 75; column_w = left_w + plot_w + key_w
title_h = 24; plot_h = 170; tics_h = 30; row_h = title_h + plot_h + tics_h; head_h = 84; foot_h = 22
width = column_w * columns; height = head_h + row_h * rows + foot_h
x(px) = px / (1.0 * width)
y(px) = 1 - px / (1.0 * height)  # from the top
pale(rgb) = "#99" . rgb[2:7]  # the colour, 60% transparent
faded(rgb) = "#90" . rgb[2:7]  # the colour, 56% transparent
primary = 2  # corrected, in models.h's order: drawn solid and bold, the others faded

do for [format in "svg png"] {
  eval terminal(format, width, height)
  set output ARG1.".".format
  set multiplot title "Training throughput against workers"

  # The key of line styles above the panels: no axes, no data.
  set lmargin at screen 0; set rmargin at screen 1
  set tmargin at screen y(26); set bmargin at screen y(head_h - 4)
  unset border; unset tics; unset xlabel; unset ylabel; unset title; unset grid; unset logscale
  set xrange [0:1]; set yrange [0:1]
  set key at screen 0.5, y(30) center top horizontal Left reverse font ",9" samplen 3 spacing 1 width 1 noautotitle
  plot NaN with points lc rgb "#333333" pt 7 ps 0.7 title "measured (median, 95% interval)", \
       NaN with lines lc rgb "#333333" dt model_dash[primary] lw 2.2 title model_title[primary], \
       for [m=1:5] NaN with lines lc rgb faded("#333333") dt model_dash[m] lw 1 title (m == primary ? "" : model_title[m]), \
       NaN with lines lc rgb "#b0b0b0" lw 6 title (bound_blocks > 0 ? "bound" : "")

  set border 31 lc rgb "#444444"
  set grid back lc rgb "#dddddd"
  set xtics 1 nomirror
  # Labels at 1, 2 and 5 of every decade ("2k", "50k").
  set ytics nomirror ()
  do for [e=0:8] { set ytics add (10**e, 2 * 10**e, 5 * 10**e) }
  set mxtics 1
  set logscale y
  set format y "%.0s%c"
  set key font ",9" samplen 2 spacing 1.1 Left reverse noautotitle
  do for [p=1:panels] {
    c = int(panel_column[p]); r = int(panel_row[p])
    left = (c - 1) * column_w + left_w; top = head_h + (r - 1) * row_h + title_h
    set lmargin at screen x(left); set rmargin at screen x(left + plot_w)
    set tmargin at screen y(top); set bmargin at screen y(top + plot_h)
    set key at screen x(left + plot_w + 12), y(top) left top
    set title panel_title[p] offset 0, -0.4
    set xlabel (r == rows ? "workers" : "") offset 0, 0.6
    set ylabel (c == 1 ? "samples / s" : "") offset 1, 0
    set format y (c == 1 ? "%.0s%c" : "")
    set xrange [x_low[p] - 0.3:x_high[p] + 0.3]
    set yrange [y_low:y_high]
    plot for [i=b_first[p]:b_last[p]] bound index (i-1) \
           using (b_panel[i] == p ? $4 : NaN):5 with lines lc rgb pale(colour(b_series[i])) lw 6, \
         for [i=p_first[p]:p_last[p]] models index (i-1) \
           using (p_panel[i] == p ? $6 : NaN):7 with lines \
           lc rgb (p_model[i] == primary ? colour(p_series[i]) : faded(colour(p_series[i]))) \
           dt model_dash[p_model[i]] lw (p_model[i] == primary ? 2.2 : 1), \
         for [i=m_first[p]:m_last[p]] measured index (i-1) \
           using (m_panel[i] == p ? $6 : NaN):7:8:9 with yerrorbars lc rgb colour(m_series[i]) pt 7 ps 0.7 lw 1.2 \
           title (m_panel[i] == p ? m_title[i] : "")
  }
  unset multiplot
  set output
}

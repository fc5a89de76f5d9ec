# Throughput against workers, one panel per architecture: each series'
# measured median with its 95% interval (points and bars), each model's
# prediction (dashed, one pattern per model) and the bound (grey dots:
# compute plus link time, which no run can beat).
load "common.gp"
measured = data("measured")
models = data("models")
bound = data("bound")

# Each block's panel (column 2) and series (column 3 or 4), and per panel
# the range of blocks it holds (the data is sorted by panel). Arrays get
# one slot at least and start at 0: an empty iteration in `plot` is still
# evaluated once, so every element below also checks that its block
# belongs to the panel.
stats measured using 2 nooutput
panels = int(STATS_max)
blocks = STATS_blocks
array panel_title[panels]
array m_panel[blocks]
array m_series[blocks]
array m_title[blocks]
do for [i=1:blocks] {
  stats measured index (i-1) every ::0::0 \
      using (m_panel[i] = column(2), panel_title[int(column(2))] = strcol(3), m_series[i] = column(4), \
             m_title[i] = strcol(5), 0) nooutput
}
model_blocks = 0
if (has("models")) { stats models using 2 nooutput; model_blocks = STATS_blocks }
array p_panel[model_blocks + 1]
array p_series[model_blocks + 1]
array p_model[model_blocks + 1]
array p_title[model_blocks + 1]
do for [i=1:model_blocks + 1] { p_panel[i] = 0; p_series[i] = 0; p_model[i] = 1; p_title[i] = "" }
do for [i=1:model_blocks] {
  stats models index (i-1) every ::0::0 \
      using (p_panel[i] = column(2), p_series[i] = column(3), p_model[i] = column(4), p_title[i] = strcol(5), 0) \
      nooutput
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

columns = panels < 3 ? panels : 3
rows = (panels + columns - 1) / columns
do for [format in "svg png"] {
  eval terminal(format, 440 * columns, 380 * rows + 40)
  set output ARG1.".".format
  set multiplot layout rows, columns title "Training throughput against workers"
  set xlabel "workers"
  set ylabel "samples / s"
  set xtics 1
  set key top left font ",8" samplen 2
  set yrange [0:*]
  do for [p=1:panels] {
    set title panel_title[p]
    # A model's and the bound's key entries only once per panel (first series).
    plot for [i=m_first[p]:m_last[p]] measured index (i-1) \
           using (m_panel[i] == p ? $6 : NaN):7:8:9 with yerrorlines lc rgb colour(m_series[i]) pt 7 ps 0.6 \
           title (m_panel[i] == p ? m_title[i] : ""), \
         for [i=p_first[p]:p_last[p]] models index (i-1) \
           using (p_panel[i] == p ? $6 : NaN):7 with lines lc rgb colour(p_series[i]) dt model_dash[p_model[i]] lw 1 \
           title (p_panel[i] == p && p_series[i] == 1 ? p_title[i] : ""), \
         for [i=b_first[p]:b_last[p]] bound index (i-1) \
           using (b_panel[i] == p ? $4 : NaN):5 with lines lc rgb "#999999" dt 3 lw 2 \
           title (b_panel[i] == p && b_series[i] == 1 ? "bound" : "")
  }
  unset multiplot
  set output
}

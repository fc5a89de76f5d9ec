# Time per iteration of one run per scheme, one panel each: rank 0's wall
# time of every iteration against its number through the whole run, the
# warm-up epoch's iterations as open triangles on a shaded band, the others
# as dots, and each epoch's mean as a line across its iterations. Without
# per-iteration times (a database or trainer older than them) the epoch
# means alone are drawn, and the title says so.
load "common.gp"
epochs = data("epochs")
iterations = data("iterations")
with_iterations = has("iterations")

# Per panel (column 2 of both files): its run (column 3), the iterations
# of its warm-up epoch and its last iteration, from the epochs.
stats epochs using 2 nooutput
panels = int(STATS_max)
array panel_title[panels]
array warm_from[panels]
array warm_to[panels]
array last_iteration[panels]
do for [p=1:panels] { panel_title[p] = ""; warm_from[p] = 0; warm_to[p] = 0; last_iteration[p] = 1 }
stats epochs using (p = int(column(2)), panel_title[p] = strcol(3), \
                    last_iteration[p] = (column(6) > last_iteration[p] ? column(6) : last_iteration[p]), \
                    warm_from[p] = (column(8) == 1 ? column(5) : warm_from[p]), \
                    warm_to[p] = (column(8) == 1 ? column(6) : warm_to[p]), 0) nooutput

steady_point = "#1b6ca8"
warmup_point = "#c8641b"
warmup_fill = "#fbe3bd"
columns = panels < 3 ? panels : 3
rows = (panels + columns - 1) / columns
width = 440 * columns
height = 340 * rows + 100
do for [format in "svg png"] {
  eval terminal(format, width, height)
  set output ARG1.".".format
  # The panels below a band for the title and the one key they share.
  heading = with_iterations ? "Time per iteration on rank 0, through every epoch (shaded: the warm-up epoch)" : \
      "Mean time per iteration of each epoch (shaded: warm-up); the database holds no per-iteration times"
  set multiplot layout rows, columns title heading \
      margins screen 70.0 / width, screen 1 - 20.0 / width, screen 50.0 / height, screen 1 - 100.0 / height \
      spacing screen 70.0 / width, screen 100.0 / height
  set xlabel "iteration (numbered through the run)"
  set ylabel "ms per iteration"
  set yrange [0:*]
  set offsets 0, 0, graph 0.05, 0
  set key at screen 0.5, 1 - 32.0 / height center top horizontal maxrows 1 font ",9" samplen 1.5
  do for [p=1:panels] {
    set title panel_title[p] font ",10"
    if (p == 1) { set key on } else { set key off }
    set xrange [0.5:last_iteration[p] + 0.5]
    unset object 1
    if (warm_to[p] > 0) {
      set object 1 rectangle from first warm_from[p] - 0.5, graph 0 to first warm_to[p] + 0.5, graph 1 \
          behind fillcolor rgb warmup_fill fillstyle solid 1.0 noborder
    }
    if (with_iterations) {
      plot iterations using ($2 == p && $7 == 0 ? $5 : NaN):6 with points pt 7 ps 0.5 lc rgb steady_point \
             title "iteration", \
           iterations using ($2 == p && $7 == 1 ? $5 : NaN):6 with points pt 8 ps 0.7 lc rgb warmup_point \
             title "warm-up iteration", \
           epochs using ($2 == p ? $5 - 0.5 : NaN):7:($6 - $5 + 1):(0) with vectors nohead lw 2 lc rgb "#333333" \
             title "epoch mean"
    } else {
      plot epochs using ($2 == p ? $5 - 0.5 : NaN):7:($6 - $5 + 1):(0) with vectors nohead lw 2 lc rgb steady_point \
             title "epoch mean"
    }
  }
  unset multiplot
  set output
}

# Predicted against measured epoch time on log-log axes, one point per
# configuration and model: calibration runs as open circles, validation runs
# as filled triangles; y = x and the bands of 5% and 10% error.
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
array b_title[blocks]
do for [i=1:blocks] {
  stats points index (i-1) every ::0::0 \
      using (b_model[i] = column(2), b_split[i] = column(4), b_title[i] = strcol(3)." (".strcol(5).")", 0) nooutput
}
do for [format in "svg png"] {
  eval terminal(format, 920, 640)
  set output ARG1.".".format
  set title "Predicted against measured epoch time"
  set logscale xy
  set xrange [low:high]
  set yrange [low:high]
  set xlabel "measured epoch time, median of the runs (s)"
  set ylabel "predicted epoch time (s)"
  set key outside right top Left reverse samplen 2 font ",9"
  set samples 200
  plot '+' using 1:(0.9 * $1):(1.1 * $1) with filledcurves fc rgb "#eeeeee" title "±10%", \
       '+' using 1:(0.95 * $1):(1.05 * $1) with filledcurves fc rgb "#d8d8d8" title "±5%", \
       x with lines lc rgb "#444444" title "y = x", \
       for [i=1:blocks] points index (i-1) using 6:7 with points \
         lc rgb model_colour[b_model[i]] pt (b_split[i] == 1 ? 6 : 9) ps model_size[b_model[i]] title b_title[i]
  set output
}

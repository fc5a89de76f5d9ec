# The cumulative distribution of each model's absolute relative error over
# the configurations: validation solid, calibration dashed.
load "common.gp"
errors = data("errors")
stats errors using 6 nooutput
blocks = STATS_blocks
array b_model[blocks]
array b_split[blocks]
array b_title[blocks]
do for [i=1:blocks] {
  stats errors index (i-1) every ::0::0 \
      using (b_model[i] = column(2), b_split[i] = column(4), b_title[i] = strcol(3)." (".strcol(5).")", 0) nooutput
}
split_dash(split) = split == 2 ? 1 : 2    # validation solid, calibration dashed
do for [format in "svg png"] {
  eval terminal(format, 920, 520)
  set output ARG1.".".format
  set title "Error of each model over the configurations"
  set logscale x
  set xlabel "absolute error of the epoch time (%)"
  set ylabel "fraction of configurations"
  set yrange [0:1.02]
  set key outside right top Left reverse samplen 5 font ",9"
  plot for [i=1:blocks] errors index (i-1) using ($6 < 0.01 ? 0.01 : $6):7 with steps \
         lc rgb model_colour[b_model[i]] dt split_dash(b_split[i]) lw model_width[b_model[i]] title b_title[i]
  set output
}

# Figures of reports/generate. Called with data (series.dat: one block per
# series, titled in its first line) and outdir. Columns: workers, epoch
# time (s), throughput (samples/s), iteration (ms), forward, backward,
# exposed communication (ms per iteration).
set terminal pngcairo size 900,600 noenhanced
set key outside right top
set grid
set xlabel "workers"
set xtics 1
stats data using 1 nooutput
blocks = STATS_blocks

set output outdir."/epoch_time.png"
set title "Epoch time"
set ylabel "epoch time (s)"
plot for [i=0:blocks-1] data index i using 1:2 with linespoints title columnheader(1)

set output outdir."/throughput.png"
set title "Training throughput"
set ylabel "samples / s"
plot for [i=0:blocks-1] data index i using 1:3 with linespoints title columnheader(1)

set output outdir."/iteration_phases.png"
set title "Time per iteration and its exposed communication"
set ylabel "ms per iteration"
plot for [i=0:blocks-1] data index i using 1:4 with linespoints title columnheader(1), \
     for [i=0:blocks-1] data index i using 1:7 with points pointtype 6 notitle

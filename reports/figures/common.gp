# What every figure template shares: loaded with `load "common.gp"` (found
# through GNUPLOT_LIB, which dmlbench report sets to this directory).
# Templates get ARG1, the figure's id (they write ARG1.".svg" and
# ARG1.".png" in the working directory, from ARG1.".<data>.tsv"), and ARG2,
# the names of its data sets that have rows. Both are plain names, never code.
set datafile separator "\t"
set datafile missing "NaN"
set encoding utf8
set termoption noenhanced
set grid back lc rgb "#dddddd"
set border lc rgb "#444444"
set key noautotitle

# has(name): does data set `name` have rows?
has(name) = strstrt(" ".ARG2." ", " ".name." ") > 0
data(name) = ARG1.".".name.".tsv"

# Colours for series, dash patterns for models (models.h's order:
# paper2019, corrected, corrected+overlap, linear).
array series_colour[8] = ["#1b6ca8", "#d1495b", "#2a9d8f", "#e9a03b", "#6a4c93", "#8d6e63", "#00798c", "#555555"]
colour(i) = series_colour[(int(i) > 0 ? int(i) - 1 : 0) % 8 + 1]
array model_dash[5] = [3, 1, 2, 4, 5]
array model_colour[5] = ["#d1495b", "#1b6ca8", "#2a9d8f", "#e9a03b", "#555555"]
# corrected+overlap predicts what corrected does wherever overlap is off:
# corrected is drawn first, wider (larger), so that it shows around it.
array model_width[5] = [2, 4.5, 1.5, 2, 2]
array model_size[5] = [1.1, 1.8, 0.9, 1.1, 1.1]

# select_terminal(format, width, height) as a command: `eval terminal(f, w, h)`.
terminal(format, w, h) = (format eq "svg" ? \
    sprintf("set terminal svg size %d,%d font 'Sans,11' background rgb 'white'", w, h) : \
    sprintf("set terminal pngcairo size %d,%d font 'Sans,10' background rgb 'white'", w, h))

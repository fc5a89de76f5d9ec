# The median of each column of whitespace-separated numbers, one line out
# (one line in per repetition; a single column gives the median of a list).
# The one median of the benchmarks' shell scripts, local/ and cluster/ alike.
{ for (c = 1; c <= NF; c++) v[c, NR] = $c; n = NR; cols = NF }
END {
  for (c = 1; c <= cols; c++) {
    for (i = 1; i <= n; i++) s[i] = v[c, i];
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (s[j] < s[i]) { t = s[i]; s[i] = s[j]; s[j] = t }
    m = (n % 2) ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2;
    printf "%s%s", m, (c < cols ? " " : "\n")
  }
}

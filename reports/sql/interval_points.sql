-- Per validation configuration: the measured median epoch time and each
-- model's prediction interval (its latest fit's; the median over the
-- configuration's runs of the bounds), with * where the interval does not
-- hold the measured median. Only configurations some fit gives an interval.
WITH shown AS (
  SELECT *, '[' || round_sig(low, 4) || ', ' || round_sig(high, 4) || ']' ||
              CASE WHEN measured BETWEEN low AND high THEN '' ELSE ' *' END AS cell
  FROM report_interval_points
)
SELECT label AS configuration, round_sig(measured, 4) AS "measured median, s",
       max(CASE model WHEN 'paper2019' THEN cell END) AS "paper2019 interval, s",
       max(CASE model WHEN 'corrected' THEN cell END) AS "corrected interval, s",
       max(CASE model WHEN 'corrected+overlap' THEN cell END) AS "corrected+overlap interval, s",
       max(CASE model WHEN 'linear' THEN cell END) AS "linear interval, s",
       max(CASE model WHEN 'counts' THEN cell END) AS "counts interval, s"
FROM shown
GROUP BY config
ORDER BY min(scheme_order), min(bandwidth), min(network), min(batch_size), min(overlap), min(workers), label;

-- Per validation configuration: the measured median epoch time and each
-- model's prediction interval (its latest fit's; the median over the
-- configuration's runs of the bounds), with * where the interval does not
-- hold the measured median. Only configurations some fit gives an interval.
WITH points AS (
  SELECT c.config, c.label, c.scheme_order, c.bandwidth, c.network, c.batch_size, c.overlap, c.workers,
         c.epoch_s AS measured, f.model,
         median(p.predicted_epoch_low_s) AS low, median(p.predicted_epoch_high_s) AS high
  FROM report_configurations c
  JOIN report_runs r ON r.config = c.config AND r.split = c.split
  JOIN predictions p ON p.run_id = r.run_id
  JOIN report_fits f ON f.fit_id = p.fit_id
  WHERE c.split = 'validation' AND p.predicted_epoch_low_s IS NOT NULL
  GROUP BY c.config, f.model
),
shown AS (
  SELECT *, '[' || round_sig(low, 4) || ', ' || round_sig(high, 4) || ']' ||
              CASE WHEN measured BETWEEN low AND high THEN '' ELSE ' *' END AS cell
  FROM points
)
SELECT label AS configuration, round_sig(measured, 4) AS measured_s,
       max(CASE model WHEN 'paper2019' THEN cell END) AS paper2019,
       max(CASE model WHEN 'corrected' THEN cell END) AS corrected,
       max(CASE model WHEN 'corrected+overlap' THEN cell END) AS "corrected+overlap",
       max(CASE model WHEN 'linear' THEN cell END) AS linear,
       max(CASE model WHEN 'counts' THEN cell END) AS counts
FROM shown
GROUP BY config
ORDER BY min(scheme_order), min(bandwidth), min(network), min(batch_size), min(overlap), min(workers), label;

-- The measurement against itself, per architecture: for each configuration
-- of 4 runs or more, its runs in repetition order dealt into two halves
-- (first, third, ... and second, fourth, ...), and half the gap between the
-- halves' medians over the median of all its runs: the split-half estimate
-- of the error of the configuration's median (each half has half the runs,
-- so their gap spreads about twice as wide). What even a model that knew
-- every true epoch time would miss by on this sweep's own noise; the same
-- as `dmlbench model validate` prints (orchestrator/model/validation.h).
WITH ranked AS (
  SELECT config, split, scheme, scheme_order, epoch_s,
         row_number() OVER (PARTITION BY config, split ORDER BY repetition, run_id) AS position,
         count(*) OVER (PARTITION BY config, split) AS n
  FROM report_runs
),
halves AS (
  SELECT min(scheme) AS scheme, min(scheme_order) AS scheme_order, split,
         abs(median(CASE WHEN position % 2 = 1 THEN epoch_s END) -
             median(CASE WHEN position % 2 = 0 THEN epoch_s END)) / (2 * median(epoch_s)) AS error
  FROM ranked
  WHERE n >= 4
  GROUP BY config, split
)
SELECT scheme AS architecture,
       sum(split = 'validation') AS val_points,
       round(100 * median(CASE WHEN split = 'validation' THEN error END), 1) AS "val_median_%",
       round(100 * quantile(CASE WHEN split = 'validation' THEN error END, 0.95), 1) AS "val_p95_%",
       round(100 * max(CASE WHEN split = 'validation' THEN error END), 1) AS "val_max_%",
       sum(split = 'calibration') AS cal_points,
       round(100 * median(CASE WHEN split = 'calibration' THEN error END), 1) AS "cal_median_%",
       round(100 * quantile(CASE WHEN split = 'calibration' THEN error END, 0.95), 1) AS "cal_p95_%",
       round(100 * max(CASE WHEN split = 'calibration' THEN error END), 1) AS "cal_max_%"
FROM halves
GROUP BY scheme
ORDER BY min(scheme_order);

-- Error per architecture and model: the absolute relative error of epoch
-- time per configuration (median of its runs), summarised over the
-- configurations; validation (never seen by the fit) and calibration apart.
-- The model "(split half)" is the measurement against itself: for each
-- configuration of 4 runs or more, its runs in repetition order dealt into
-- two halves (first, third, ... and second, fourth, ...), half the gap
-- between the halves' medians over the median of all its runs, the
-- split-half estimate of the error of the configuration's median (each half
-- has half the runs, so their gap spreads about twice as wide); the same as
-- `dmlbench model validate` prints (orchestrator/model/validation.h).
WITH ranked AS (
  SELECT config, split, scheme, scheme_order, epoch_s,
         row_number() OVER (PARTITION BY config, split ORDER BY repetition, run_id) AS position,
         count(*) OVER (PARTITION BY config, split) AS n
  FROM report_runs
),
e AS (
  SELECT c.scheme, c.scheme_order, p.model, p.model_order, p.split, abs(p.relative_error) AS error
  FROM report_predictions p JOIN report_configurations c ON c.config = p.config AND c.split = p.split
  UNION ALL
  SELECT min(scheme), min(scheme_order), '(split half)', 99, split,
         abs(median(CASE WHEN position % 2 = 1 THEN epoch_s END) -
             median(CASE WHEN position % 2 = 0 THEN epoch_s END)) / (2 * median(epoch_s))
  FROM ranked
  WHERE n >= 4 AND EXISTS (SELECT 1 FROM report_predictions)  -- beside models, not alone
  GROUP BY config, split
)
SELECT scheme AS architecture, model,
       sum(split = 'validation') AS "validation: configurations",
       round(100 * median(CASE WHEN split = 'validation' THEN error END), 1) AS "validation: median error %",
       round(100 * quantile(CASE WHEN split = 'validation' THEN error END, 0.95), 1) AS "validation: p95 error %",
       round(100 * max(CASE WHEN split = 'validation' THEN error END), 1) AS "validation: max error %",
       sum(split = 'calibration') AS "calibration: configurations",
       round(100 * median(CASE WHEN split = 'calibration' THEN error END), 1) AS "calibration: median error %",
       round(100 * quantile(CASE WHEN split = 'calibration' THEN error END, 0.95), 1) AS "calibration: p95 error %",
       round(100 * max(CASE WHEN split = 'calibration' THEN error END), 1) AS "calibration: max error %"
FROM e
GROUP BY scheme, model
ORDER BY min(scheme_order), min(model_order);

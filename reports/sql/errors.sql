-- Error per architecture and model: the absolute relative error of epoch
-- time per configuration (median of its runs), summarised over the
-- configurations; validation (never seen by the fit) and calibration apart.
WITH e AS (
  SELECT c.scheme, c.scheme_order, p.model, p.model_order, p.split, abs(p.relative_error) AS error
  FROM report_predictions p JOIN report_configurations c ON c.config = p.config AND c.split = p.split
)
SELECT scheme AS architecture, model,
       sum(split = 'validation') AS val_points,
       round(100 * median(CASE WHEN split = 'validation' THEN error END), 1) AS "val_median_%",
       round(100 * quantile(CASE WHEN split = 'validation' THEN error END, 0.95), 1) AS "val_p95_%",
       round(100 * max(CASE WHEN split = 'validation' THEN error END), 1) AS "val_max_%",
       sum(split = 'calibration') AS cal_points,
       round(100 * median(CASE WHEN split = 'calibration' THEN error END), 1) AS "cal_median_%",
       round(100 * quantile(CASE WHEN split = 'calibration' THEN error END, 0.95), 1) AS "cal_p95_%",
       round(100 * max(CASE WHEN split = 'calibration' THEN error END), 1) AS "cal_max_%"
FROM e
GROUP BY scheme, model
ORDER BY min(scheme_order), min(model_order);

-- Prediction intervals on the validation configurations: per architecture
-- and model (its latest fit), the configurations whose predictions carry an
-- interval, how many of their measured medians it holds, that share, and
-- the median of the interval's half-width relative to the prediction. Each
-- fit's interval comes from its calibration runs alone (split-conformal on
-- each calibration configuration left out; orchestrator/model/interval.h),
-- so the coverage of the validation configurations tests its level.
WITH points AS (
  SELECT c.scheme, c.scheme_order, f.model, f.model_order, c.epoch_s AS measured,
         median(p.predicted_epoch_s) AS predicted, median(p.predicted_epoch_low_s) AS low,
         median(p.predicted_epoch_high_s) AS high, max(p.interval_level) AS level
  FROM report_configurations c
  JOIN report_runs r ON r.config = c.config AND r.split = c.split
  JOIN predictions p ON p.run_id = r.run_id
  JOIN report_fits f ON f.fit_id = p.fit_id
  WHERE c.split = 'validation' AND p.predicted_epoch_low_s IS NOT NULL
  GROUP BY c.config, f.model
)
SELECT scheme AS architecture, model, round(100 * max(level)) AS "level_%", count(*) AS val_points,
       sum(measured BETWEEN low AND high) AS covered,
       round(100.0 * sum(measured BETWEEN low AND high) / count(*), 1) AS "coverage_%",
       round(100 * median((high - low) / (2 * predicted)), 1) AS "median_half_width_%"
FROM points
GROUP BY scheme, model
ORDER BY min(scheme_order), min(model_order);

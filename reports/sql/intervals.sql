-- Prediction intervals on the validation configurations: per architecture
-- and model (its latest fit), the configurations whose predictions carry an
-- interval, how many of their measured medians it holds, that share, and
-- the median of the interval's half-width relative to the prediction. Each
-- fit's interval comes from its calibration runs alone (split-conformal on
-- each calibration configuration left out; orchestrator/model/interval.h),
-- so the coverage of the validation configurations tests its level.
SELECT scheme AS architecture, model, round(100 * max(level)) AS "level, %", count(*) AS "validation configurations",
       sum(measured BETWEEN low AND high) AS "inside the interval",
       round(100.0 * sum(measured BETWEEN low AND high) / count(*), 1) AS "coverage, %",
       round(100 * median((high - low) / (2 * predicted)), 1) AS "median half-width, %"
FROM report_interval_points
GROUP BY scheme, model
ORDER BY min(scheme_order), min(model_order);

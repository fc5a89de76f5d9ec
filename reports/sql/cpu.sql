-- The model's CPU account against the runs' own reports. Where a rank's
-- CPU quota binds, its CPU time per iteration sets the iteration, so the
-- models that keep a CPU account (corrected, corrected+overlap) store with
-- each prediction the CPU time per iteration they expect of the run's
-- busiest worker and busiest server, beside what the run's ranks reported
-- (predictions, migration 012). Per configuration: the model's over the
-- median of its runs' reports; then per architecture, model and role the
-- median and range over the configurations, validation and calibration
-- apart. A ratio under 1 where the quota binds predicts too fast. The same
-- as `dmlbench model validate` prints (orchestrator/model/validation.h).
WITH per_config AS (
  SELECT c.scheme, c.scheme_order, f.model, f.model_order, c.split,
         median(p.predicted_worker_cpu_s) / median(p.measured_worker_cpu_s) AS worker,
         median(p.predicted_server_cpu_s) / median(p.measured_server_cpu_s) AS server
  FROM report_configurations c
  JOIN report_runs r ON r.config = c.config AND r.split = c.split
  JOIN predictions p ON p.run_id = r.run_id
  JOIN report_fits f ON f.fit_id = p.fit_id
  WHERE p.predicted_worker_cpu_s IS NOT NULL
  GROUP BY c.config, c.split, f.model
),
roles AS (
  SELECT scheme, scheme_order, model, model_order, split, 'worker' AS role, 1 AS role_order, worker AS ratio
  FROM per_config WHERE worker > 0
  UNION ALL
  SELECT scheme, scheme_order, model, model_order, split, 'server', 2, server
  FROM per_config WHERE server > 0
)
SELECT scheme AS architecture, model, role,
       sum(split = 'validation') AS "validation: configurations",
       round(median(CASE WHEN split = 'validation' THEN ratio END), 2) AS "validation: median ratio",
       round(min(CASE WHEN split = 'validation' THEN ratio END), 2) AS "validation: min ratio",
       round(max(CASE WHEN split = 'validation' THEN ratio END), 2) AS "validation: max ratio",
       sum(split = 'calibration') AS "calibration: configurations",
       round(median(CASE WHEN split = 'calibration' THEN ratio END), 2) AS "calibration: median ratio",
       round(min(CASE WHEN split = 'calibration' THEN ratio END), 2) AS "calibration: min ratio",
       round(max(CASE WHEN split = 'calibration' THEN ratio END), 2) AS "calibration: max ratio"
FROM roles
GROUP BY scheme, model, role
ORDER BY min(scheme_order), min(model_order), min(role_order);

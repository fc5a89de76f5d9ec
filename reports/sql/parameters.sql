-- Calibrated parameters of the latest fit of each model, with their 95%
-- confidence intervals (fitted by the model's fit, or measured before it
-- from the runs' own reports), or where they came from (probe, fixed): the
-- fitted ones first, then the measured ones, then the rest.
SELECT f.model, f.fit_id AS fit, p.name AS parameter, p.scope,
       round_sig(p.value, 4) AS value,
       CASE WHEN p.ci_low IS NULL THEN '' ELSE '[' || round_sig(p.ci_low, 4) || ', ' || round_sig(p.ci_high, 4) || ']'
       END AS "95% interval",
       p.unit, p.source,
       m.points AS "calibration points", round_sig(1e3 * m.residual_rms_s, 3) AS "residual RMS, ms"
FROM report_fits f
JOIN model_fits m ON m.fit_id = f.fit_id
JOIN model_parameters p ON p.fit_id = f.fit_id
ORDER BY f.model_order, CASE p.source WHEN 'fitted' THEN 0 WHEN 'measured' THEN 1 ELSE 2 END, p.scope, p.name;

-- Per configuration: the measured median epoch time over the runs with its
-- 95% interval (coverage below 95% when there are too few runs), n, the
-- coefficient of variation between runs, and each model's prediction and
-- relative error (predicted / measured - 1). The prediction intervals are
-- in interval_points.sql: a database older than them still shows this.
SELECT c.label AS configuration, c.split, c.n,
       round_sig(c.epoch_s, 4) || ' [' || round_sig(c.epoch_s_low, 4) || ', ' || round_sig(c.epoch_s_high, 4) || ']' ||
         CASE WHEN c.coverage < 0.95 THEN ' (' || round(100 * c.coverage, 1) || '%)' ELSE '' END AS epoch_s_median_ci95,
       round(100 * c.epoch_cv, 2) AS "cv_%",
       round_sig(max(CASE p.model WHEN 'paper2019' THEN p.predicted_epoch_s END), 4) AS paper2019_s,
       round(100 * max(CASE p.model WHEN 'paper2019' THEN p.relative_error END), 1) AS "paper2019_err_%",
       round_sig(max(CASE p.model WHEN 'corrected' THEN p.predicted_epoch_s END), 4) AS corrected_s,
       round(100 * max(CASE p.model WHEN 'corrected' THEN p.relative_error END), 1) AS "corrected_err_%",
       round_sig(max(CASE p.model WHEN 'corrected+overlap' THEN p.predicted_epoch_s END), 4) AS overlap_model_s,
       round(100 * max(CASE p.model WHEN 'corrected+overlap' THEN p.relative_error END), 1) AS "overlap_model_err_%",
       round_sig(max(CASE p.model WHEN 'linear' THEN p.predicted_epoch_s END), 4) AS linear_s,
       round(100 * max(CASE p.model WHEN 'linear' THEN p.relative_error END), 1) AS "linear_err_%",
       round_sig(max(CASE p.model WHEN 'counts' THEN p.predicted_epoch_s END), 4) AS counts_s,
       round(100 * max(CASE p.model WHEN 'counts' THEN p.relative_error END), 1) AS "counts_err_%"
FROM report_configurations c
LEFT JOIN report_predictions p ON p.config = c.config AND p.split = c.split
GROUP BY c.config, c.split
ORDER BY c.scheme_order, c.bandwidth, c.network, c.batch_size, c.overlap, c.workers, c.label, c.split;

-- Per configuration: the measured median epoch time over the runs with its
-- 95% interval (coverage below 95% when there are too few runs; one run's
-- time alone, with no interval), the number of runs, the coefficient of
-- variation between runs, and each model's relative error (predicted /
-- measured - 1: the prediction is the median times 1 + the error). The
-- prediction intervals are in interval_points.sql: a database older than
-- them still shows this.
SELECT c.label AS configuration, c.split, c.n AS runs,
       CASE WHEN c.n = 1 THEN round_sig(c.epoch_s, 4) || ''
            ELSE round_sig(c.epoch_s, 4) || ' [' || round_sig(c.epoch_s_low, 4) || ', ' ||
                 round_sig(c.epoch_s_high, 4) || ']' ||
                 CASE WHEN c.coverage < 0.95 THEN ' (' || round(100 * c.coverage, 1) || '%)' ELSE '' END
       END AS "epoch time, s: median [95% interval]",
       round(100 * c.epoch_cv, 2) AS "run-to-run CV, %",
       round(100 * max(CASE p.model WHEN 'paper2019' THEN p.relative_error END), 1) AS "paper2019: error %",
       round(100 * max(CASE p.model WHEN 'corrected' THEN p.relative_error END), 1) AS "corrected: error %",
       round(100 * max(CASE p.model WHEN 'corrected+overlap' THEN p.relative_error END), 1)
         AS "corrected+overlap: error %",
       round(100 * max(CASE p.model WHEN 'linear' THEN p.relative_error END), 1) AS "linear: error %",
       round(100 * max(CASE p.model WHEN 'counts' THEN p.relative_error END), 1) AS "counts: error %"
FROM report_configurations c
LEFT JOIN report_predictions p ON p.config = c.config AND p.split = c.split
GROUP BY c.config, c.split
ORDER BY c.scheme_order, c.bandwidth, c.network, c.batch_size, c.overlap, c.workers, c.label, c.split;

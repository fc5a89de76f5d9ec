-- Figure "error_cdf": per model and split, the absolute relative errors of
-- the configurations in increasing order with their cumulative fraction.
SELECT p.model || ' ' || p.split AS block,
       p.model_order AS model, p.model AS model_title,
       CASE p.split WHEN 'calibration' THEN 1 ELSE 2 END AS split, p.split AS split_title,
       100 * abs(p.relative_error) AS error_percent,
       1.0 * row_number() OVER (PARTITION BY p.model, p.split ORDER BY abs(p.relative_error), p.config)
         / count(*) OVER (PARTITION BY p.model, p.split) AS fraction
FROM report_predictions p
ORDER BY p.model_order, p.split, abs(p.relative_error), p.config;

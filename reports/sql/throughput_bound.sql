-- Figure "throughput": the bound no run can beat, per series: samples of an
-- iteration over its compute (the corrected model's term) plus its link
-- time (alpha times the dependent latencies plus the busiest link's bytes
-- over B, from the probe).
SELECT c.series AS block,
       dense_rank() OVER (ORDER BY c.scheme_order) AS panel,
       dense_rank() OVER (PARTITION BY c.scheme_order ORDER BY c.bandwidth, c.network, c.batch_size, c.overlap, c.series)
         AS series,
       c.workers, c.batch_size * c.workers / (p.compute_s + p.link_s) AS bound_samples_per_s
FROM report_configurations c
JOIN report_predictions p ON p.config = c.config AND p.split = c.split AND p.model = 'corrected'
WHERE p.link_s IS NOT NULL
ORDER BY c.scheme_order, c.bandwidth, c.network, c.batch_size, c.overlap, c.series, c.workers;

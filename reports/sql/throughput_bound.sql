-- Figure "throughput": the bound no run can beat, per series: samples of an
-- iteration over iteration_bound_s (compute at a full core plus the least
-- an allreduce or a parameter server must move over the busiest link;
-- reports/README.md).
SELECT s.series AS block, s.panel, s.series_in_panel AS series,
       c.workers, c.batch_size * c.workers / b.bound_s AS bound_samples_per_s
FROM report_configurations c
JOIN report_throughput_series s ON s.config = c.config AND s.split = c.split
JOIN (SELECT r.config, r.split, median(iteration_bound_s(r.run_id)) AS bound_s
      FROM report_runs r GROUP BY r.config, r.split) b ON b.config = c.config AND b.split = c.split
WHERE b.bound_s IS NOT NULL
ORDER BY s.panel, s.series_in_panel, c.workers;

-- Figure "throughput": the bound no run can beat, per series: samples of an
-- iteration over iteration_bound_s (compute at a full core plus the least
-- an allreduce or a parameter server must move over the busiest link;
-- reports/README.md).
SELECT c.series AS block,
       dense_rank() OVER (ORDER BY c.scheme_order) AS panel,
       dense_rank() OVER (PARTITION BY c.scheme_order ORDER BY c.bandwidth, c.network, c.batch_size, c.overlap, c.series)
         AS series,
       c.workers, c.batch_size * c.workers / b.bound_s AS bound_samples_per_s
FROM report_configurations c
JOIN (SELECT r.config, r.split, median(iteration_bound_s(r.run_id)) AS bound_s
      FROM report_runs r GROUP BY r.config, r.split) b ON b.config = c.config AND b.split = c.split
WHERE b.bound_s IS NOT NULL
ORDER BY c.scheme_order, c.bandwidth, c.network, c.batch_size, c.overlap, c.series, c.workers;

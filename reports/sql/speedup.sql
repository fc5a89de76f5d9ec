-- Speedup and efficiency against 1 worker (Hoefler & Belli, rule 1): the
-- base case is the same configuration with 1 worker — one trainer process
-- (ps: with its servers), not the best serial program — and its median
-- throughput is shown with every row. speedup = median throughput at w /
-- the base's; efficiency = speedup / w.
SELECT c.series, c.workers, c.split,
       round(c.samples_per_s) AS "throughput, samples/s",
       round(b.samples_per_s) AS "1-worker throughput, samples/s",
       round(c.samples_per_s / b.samples_per_s, 3) AS speedup,
       round(c.samples_per_s / b.samples_per_s / c.workers, 3) AS efficiency
FROM report_configurations c
JOIN report_configurations b ON b.but_workers = c.but_workers AND b.workers = 1
ORDER BY c.scheme_order, c.bandwidth, c.network, c.batch_size, c.overlap, c.series, c.workers;

-- Figure "throughput": measured median throughput per configuration with
-- its 95% interval. One block per series (configurations that differ only
-- in workers); panel = architecture, series = position of the series in its
-- panel, for colours.
SELECT c.series AS block,
       dense_rank() OVER (ORDER BY c.scheme_order) AS panel,
       c.scheme AS panel_title,
       dense_rank() OVER (PARTITION BY c.scheme_order ORDER BY c.bandwidth, c.network, c.batch_size, c.overlap, c.series)
         AS series,
       c.series AS series_title,
       c.workers, c.samples_per_s, c.samples_per_s_low, c.samples_per_s_high
FROM report_configurations c
ORDER BY c.scheme_order, c.bandwidth, c.network, c.batch_size, c.overlap, c.series, c.workers;

-- Figure "throughput": measured median throughput per configuration with
-- its 95% interval. One block per series; panels and series as
-- report_throughput_series numbers them (series for colours, row and
-- column for the panel's place).
SELECT s.series AS block, s.panel, s.panel_title, s.series_in_panel AS series, s.variant AS series_title,
       c.workers, c.samples_per_s, c.samples_per_s_low, c.samples_per_s_high, s.panel_row, s.panel_column
FROM report_configurations c
JOIN report_throughput_series s ON s.config = c.config AND s.split = c.split
ORDER BY s.panel, s.series_in_panel, c.workers;

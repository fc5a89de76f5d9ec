-- Figure "throughput_ranking": per network, each scheme's main series (the
-- one of its panel in the throughput figure with the most configurations:
-- series_in_panel = 1), its measured median throughput per worker count
-- with the 95% interval. One block per network and scheme; network_index
-- numbers the networks from the slowest, scheme_index the schemes in the
-- paper's order (colours).
SELECT s.series AS block, s.panel_column AS network_index,
       CASE WHEN c.network = '' THEN 'unshaped' ELSE c.network END ||
         CASE WHEN c.bandwidth >= 1e9 THEN printf(' (%g Gbit/s)', c.bandwidth / 1e9)
              WHEN c.bandwidth > 0 THEN printf(' (%g Mbit/s)', c.bandwidth / 1e6) ELSE '' END AS network,
       s.panel_row AS scheme_index, c.scheme, c.workers,
       c.samples_per_s, c.samples_per_s_low, c.samples_per_s_high
FROM report_configurations c
JOIN report_throughput_series s ON s.config = c.config AND s.split = c.split
WHERE s.series_in_panel = 1
ORDER BY s.panel_column, s.panel_row, c.workers;

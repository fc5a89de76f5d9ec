-- Figure "throughput_ranking": the corrected model's predicted throughput
-- of the same series (throughput_ranking.sql), one block per network and
-- scheme.
SELECT s.series AS block, s.panel_column AS network_index, s.panel_row AS scheme_index, c.workers,
       p.predicted_samples_per_s
FROM report_configurations c
JOIN report_throughput_series s ON s.config = c.config AND s.split = c.split
JOIN report_predictions p ON p.config = c.config AND p.split = c.split AND p.model = 'corrected'
WHERE s.series_in_panel = 1
ORDER BY s.panel_column, s.panel_row, c.workers;

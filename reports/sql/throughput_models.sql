-- Figure "throughput": each model's predicted throughput, one block per
-- series and model (model = models.h's order, for dash patterns).
SELECT s.series || ' | ' || p.model AS block, s.panel, s.series_in_panel AS series,
       p.model_order AS model, p.model AS model_title,
       c.workers, p.predicted_samples_per_s
FROM report_configurations c
JOIN report_throughput_series s ON s.config = c.config AND s.split = c.split
JOIN report_predictions p ON p.config = c.config AND p.split = c.split
ORDER BY s.panel, s.series_in_panel, p.model_order, c.workers;

-- Figure "throughput": each model's predicted throughput, one block per
-- series and model (model = models.h's order, for dash patterns).
SELECT c.series || ' | ' || p.model AS block,
       dense_rank() OVER (ORDER BY c.scheme_order) AS panel,
       dense_rank() OVER (PARTITION BY c.scheme_order ORDER BY c.bandwidth, c.network, c.batch_size, c.overlap, c.series)
         AS series,
       p.model_order AS model, p.model AS model_title,
       c.workers, p.predicted_samples_per_s
FROM report_configurations c
JOIN report_predictions p ON p.config = c.config AND p.split = c.split
ORDER BY c.scheme_order, c.bandwidth, c.network, c.batch_size, c.overlap, c.series, p.model_order, c.workers;

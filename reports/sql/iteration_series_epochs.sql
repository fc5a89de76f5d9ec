-- Figure "iteration_series", its epochs: for the run of each scheme that
-- report_series_runs picks (sql/views.sql says which and why), every epoch
-- with the iterations it spans, numbered through the whole run, and its
-- mean time per iteration; epoch 1 is warm-up, never used by the summaries.
-- Every complete run has these rows, so the figure can always be drawn:
-- from them alone when the database holds no per-iteration times.
SELECT s.scheme AS block, s.panel, s.label AS run, e.epoch,
       sum(e.iterations) OVER run_so_far - e.iterations + 1 AS first_iteration,
       sum(e.iterations) OVER run_so_far AS last_iteration,
       round(1e3 * e.wall_s / e.iterations, 4) AS mean_ms,
       e.epoch = 1 AS warmup
FROM report_series_runs s
JOIN runs r ON r.run_id = s.run_id
JOIN epochs e ON e.attempt_id = r.complete_attempt_id
WHERE e.iterations > 0
WINDOW run_so_far AS (PARTITION BY s.run_id ORDER BY e.epoch ROWS UNBOUNDED PRECEDING)
ORDER BY s.panel, e.epoch;

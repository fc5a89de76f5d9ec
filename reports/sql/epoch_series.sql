-- Figure "epoch_series": time per iteration of each epoch of one run per
-- architecture (the run with the most epochs, then the most workers, then
-- the first): the first epoch is warm-up, never used by the summaries.
-- Per-iteration timelines are not stored in the database; an epoch's mean
-- is the finest grain it holds.
WITH chosen AS (
  SELECT run_id, scheme, scheme_order, label FROM (
    SELECT r.run_id, r.scheme, r.scheme_order, r.label,
           row_number() OVER (PARTITION BY r.scheme ORDER BY ru.epochs DESC, r.workers DESC, r.run_id) AS pick
    FROM report_runs r JOIN runs ru USING (run_id)
  ) WHERE pick = 1
)
SELECT ch.scheme AS block,
       dense_rank() OVER (ORDER BY ch.scheme_order) AS scheme, ch.label AS run,
       e.epoch, 1e3 * e.wall_s / e.iterations AS iteration_ms, e.epoch = 1 AS warmup
FROM chosen ch
JOIN runs r ON r.run_id = ch.run_id
JOIN epochs e ON e.attempt_id = r.complete_attempt_id
WHERE e.iterations > 0
ORDER BY ch.scheme_order, e.epoch;

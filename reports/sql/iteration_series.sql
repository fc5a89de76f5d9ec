-- Figure "iteration_series", its iterations: rank 0's wall time of every
-- iteration of the same runs as sql/iteration_series_epochs.sql, numbered
-- through the whole run (epoch 2's first iteration follows epoch 1's last),
-- in milliseconds; warm-up marks the iterations of epoch 1. The iterations
-- table exists from schema version 8 on and is filled by trainers that
-- report `iteration_wall_us`; without it, the figure shows the epoch means.
WITH spans AS (
  SELECT s.scheme, s.panel, s.label, e.attempt_id, e.epoch,
         sum(e.iterations) OVER (PARTITION BY s.run_id ORDER BY e.epoch ROWS UNBOUNDED PRECEDING) - e.iterations
           AS before
  FROM report_series_runs s
  JOIN runs r ON r.run_id = s.run_id
  JOIN epochs e ON e.attempt_id = r.complete_attempt_id
)
SELECT sp.scheme AS block, sp.panel, sp.label AS run, sp.epoch, sp.before + i.iteration AS iteration,
       round(1e3 * i.wall_s, 3) AS iteration_ms, sp.epoch = 1 AS warmup
FROM spans sp
JOIN iterations i ON i.attempt_id = sp.attempt_id AND i.epoch = sp.epoch
ORDER BY sp.panel, sp.epoch, i.iteration;

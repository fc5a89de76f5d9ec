-- Setup and factors: every run parameter with the values the complete runs
-- took, and how many runs and repetitions there are.
WITH done AS (SELECT * FROM runs WHERE status = 'complete'),
values_of(factor, value, ord) AS (
  SELECT 'architecture', architecture, CASE architecture WHEN 'ps' THEN 0 WHEN 'p2p' THEN 1 WHEN 'ring' THEN 2 ELSE 3 END
    FROM done GROUP BY architecture
  UNION ALL SELECT 'servers (ps)', servers, servers FROM done WHERE architecture = 'ps' GROUP BY servers
  UNION ALL SELECT 'workers', workers, workers FROM done GROUP BY workers
  UNION ALL SELECT 'batch size', batch_size, batch_size FROM done GROUP BY batch_size
  UNION ALL SELECT 'overlap', CASE overlap WHEN 1 THEN 'on' ELSE 'off' END, overlap FROM done GROUP BY overlap
  UNION ALL SELECT 'network', CASE WHEN network = '' THEN 'unshaped' ELSE network END, network_bandwidth_bits_per_s
    FROM done GROUP BY network
  UNION ALL SELECT 'epochs (first is warm-up)', epochs, epochs FROM done GROUP BY epochs
  UNION ALL SELECT 'iterations per epoch cap (0 = none)', max_iterations_per_epoch, max_iterations_per_epoch
    FROM done GROUP BY max_iterations_per_epoch
  UNION ALL SELECT 'hidden layers', hidden, hidden FROM done GROUP BY hidden
  UNION ALL SELECT 'learning rate', learning_rate, learning_rate FROM done GROUP BY learning_rate
  UNION ALL SELECT 'overlap bucket bytes', bucket_bytes, bucket_bytes FROM done GROUP BY bucket_bytes
  UNION ALL SELECT 'exchange partition bytes (0 = whole)', partition_bytes, partition_bytes FROM done
    GROUP BY partition_bytes
  UNION ALL SELECT 'a single server''s pulls', CASE pulls_in_turn WHEN 1 THEN 'in turn' ELSE 'at once' END,
                   pulls_in_turn
    FROM done WHERE architecture = 'ps' AND servers = 1 AND partition_bytes = 0 AND overlap = 0
    GROUP BY pulls_in_turn
  UNION ALL SELECT 'dataset', dataset, dataset FROM done GROUP BY dataset
),
factors(factor, vals, ord) AS (
  SELECT factor, group_concat(value, ', '),
         CASE factor WHEN 'architecture' THEN 1 WHEN 'servers (ps)' THEN 2 WHEN 'workers' THEN 3
                     WHEN 'batch size' THEN 4 WHEN 'overlap' THEN 5 WHEN 'network' THEN 6
                     WHEN 'epochs (first is warm-up)' THEN 7 WHEN 'iterations per epoch cap (0 = none)' THEN 8
                     WHEN 'hidden layers' THEN 9 WHEN 'learning rate' THEN 10 WHEN 'overlap bucket bytes' THEN 11
                     WHEN 'exchange partition bytes (0 = whole)' THEN 11.5
                     WHEN 'a single server''s pulls' THEN 11.7 ELSE 12 END
  FROM (SELECT * FROM values_of ORDER BY factor, ord, value) GROUP BY factor
),
counts AS (
  SELECT count(*) AS n, min(k) AS least, max(k) AS most, count(DISTINCT config) AS configurations
  FROM (SELECT config, count(*) AS k FROM report_runs GROUP BY config)
)
SELECT factor, vals AS "values" FROM (
  SELECT factor, vals, ord FROM factors
  UNION ALL
  SELECT 'configurations', configurations, 13 FROM counts WHERE configurations > 0
  UNION ALL
  SELECT 'repetitions per configuration', CASE WHEN least = most THEN least ELSE least || ' to ' || most END, 14
  FROM counts WHERE configurations > 0
  UNION ALL
  SELECT 'runs', (SELECT count(*) FROM runs WHERE status = 'complete') || ' complete (' ||
         (SELECT count(*) FROM runs WHERE status = 'complete' AND split = 'calibration') || ' calibration, ' ||
         (SELECT count(*) FROM runs WHERE status = 'complete' AND split = 'validation') || ' validation), ' ||
         (SELECT count(*) FROM runs WHERE status IN ('failed', 'interrupted')) || ' failed or interrupted, ' ||
         (SELECT count(*) FROM runs WHERE status IN ('pending', 'running')) || ' not run', 15
  WHERE EXISTS (SELECT 1 FROM done)
)
ORDER BY ord;

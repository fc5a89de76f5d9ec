-- dmlbench results database, version 13: a single parameter server's pulls
-- in turn. A run of ps with one server, the gradient exchanged whole and
-- overlap off may have its server send the new model to one worker at a
-- time, each send acknowledged before the next (trainer --pulls-in-turn;
-- matrix pulls_in_turn), instead of to every worker at once. 0 is the
-- server that sends at once, as every run stored before this version did.
-- The CHECK keeps it to the configurations the trainer allows it for.
-- run_summary and run_overview name it, so that runs differing only in it
-- are never one configuration.

ALTER TABLE runs ADD COLUMN pulls_in_turn INTEGER NOT NULL DEFAULT 0
  CHECK (pulls_in_turn = 0 OR (pulls_in_turn = 1 AND architecture = 'ps' AND servers = 1
                               AND partition_bytes = 0 AND overlap = 0));

DROP VIEW run_summary;
CREATE VIEW run_summary AS
SELECT r.architecture, r.servers, r.workers, r.batch_size, r.overlap, r.network,
       r.epochs, r.hidden, r.learning_rate, r.bucket_bytes, r.partition_bytes, r.pulls_in_turn,
       r.max_iterations_per_epoch, r.dataset, r.network_bandwidth_bits_per_s, r.network_latency_s,
       substr(r.trainer_sha256, 1, 12) AS trainer, substr(r.dataset_sha256, 1, 12) AS dataset_checksum,
       count(DISTINCT s.run_id) AS runs,
       count(*) AS epochs_used,
       max(s.warmup_included) AS warmup_included,
       avg(s.wall_s) AS epoch_s_mean,
       CASE WHEN count(*) > 1
            THEN sqrt(max(0.0, (sum(s.wall_s * s.wall_s) - sum(s.wall_s) * sum(s.wall_s) / count(*)) / (count(*) - 1)))
       END AS epoch_s_stddev,
       min(s.wall_s) AS epoch_s_min,
       max(s.wall_s) AS epoch_s_max,
       avg(s.throughput_samples_per_s) AS throughput_mean,
       CASE WHEN count(*) > 1
            THEN sqrt(max(0.0, (sum(s.throughput_samples_per_s * s.throughput_samples_per_s)
                                - sum(s.throughput_samples_per_s) * sum(s.throughput_samples_per_s) / count(*))
                               / (count(*) - 1)))
       END AS throughput_stddev,
       min(s.throughput_samples_per_s) AS throughput_min,
       max(s.throughput_samples_per_s) AS throughput_max
FROM steady_epochs s JOIN runs r USING (run_id)
GROUP BY r.architecture, r.servers, r.workers, r.batch_size, r.overlap, r.epochs, r.hidden, r.learning_rate,
         r.bucket_bytes, r.partition_bytes, r.pulls_in_turn, r.max_iterations_per_epoch, r.dataset,
         r.network_bandwidth_bits_per_s, r.network_latency_s, r.trainer_sha256, r.dataset_sha256;

DROP VIEW run_overview;
CREATE VIEW run_overview AS
SELECT r.run_id, r.run_key, r.experiment_id, e.name AS experiment, r.architecture, r.servers, r.workers,
       r.batch_size, r.epochs, r.hidden, r.learning_rate, r.overlap, r.bucket_bytes, r.partition_bytes,
       r.pulls_in_turn, r.max_iterations_per_epoch, r.dataset, r.network, r.seed, r.repetition, r.split, r.status,
       r.attempts, r.trainer_sha256,
       coalesce((SELECT group_concat(tag, ',') FROM (SELECT tag FROM run_tags t
                                                     WHERE t.run_id = r.run_id ORDER BY tag)), '') AS tags
FROM runs r JOIN experiments e USING (experiment_id);

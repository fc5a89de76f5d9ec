-- dmlbench results database, version 3: steady state, and the performance
-- model fitted on calibration data only (schemas/database.md, "The two splits").
--
-- 1. Steady state. The first epoch of a run is warm-up (page faults,
--    connection set-up, caches): steady_epochs drops it whenever the run has
--    a later epoch; a one-epoch run keeps its only epoch and says so in
--    `warmup_included`. The raw rows stay in `epochs`.
-- 2. run_summary groups by the whole configuration (every parameter but
--    seed and repetition, and the trainer build and dataset), over steady
--    epochs.
-- 3. model_fits and what each used; predictions. Triggers refuse a fit that
--    uses a validation run or a probe not marked calibration, and a
--    prediction whose split is not its run's (so an error on a calibration
--    run can never be reported as validation).
-- 4. The order a sweep ran its runs in (attempts.sweep_seed, sweep_position).

CREATE VIEW steady_epochs AS
SELECT ce.*,
       NOT EXISTS (SELECT 1 FROM epochs later
                   WHERE later.attempt_id = ce.attempt_id AND later.epoch > 1) AS warmup_included
FROM complete_epochs ce
WHERE ce.epoch > 1
   OR NOT EXISTS (SELECT 1 FROM epochs later WHERE later.attempt_id = ce.attempt_id AND later.epoch > 1);

DROP VIEW run_summary;
CREATE VIEW run_summary AS
SELECT r.architecture, r.servers, r.workers, r.batch_size, r.overlap, r.network,
       r.epochs, r.hidden, r.learning_rate, r.bucket_bytes, r.max_iterations_per_epoch, r.dataset,
       r.network_bandwidth_bits_per_s, r.network_latency_s,
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
         r.bucket_bytes, r.max_iterations_per_epoch, r.dataset, r.network_bandwidth_bits_per_s,
         r.network_latency_s, r.trainer_sha256, r.dataset_sha256;

-- Probes are calibration data (they measure links, not runs).
ALTER TABLE link_probes ADD COLUMN split TEXT NOT NULL DEFAULT 'calibration'
  CHECK (split IN ('calibration', 'validation'));

-- One fit of one model. Parameters, residuals and the runs and probes used
-- are child rows; `code_commit` is the dmlbench build that fitted.
CREATE TABLE model_fits (
  fit_id          INTEGER PRIMARY KEY,
  model           TEXT NOT NULL,             -- paper2019 | corrected | corrected+overlap | linear
  model_version   INTEGER NOT NULL CHECK (model_version >= 1),
  created_unix_s  REAL NOT NULL,
  code_commit     TEXT NOT NULL,
  scope           TEXT NOT NULL DEFAULT '',  -- experiment names the fit was restricted to, '' = all
  points          INTEGER NOT NULL CHECK (points >= 0),   -- calibration configurations fitted
  residual_rms_s  REAL                       -- of the per-iteration time over the calibration runs
);

CREATE TABLE model_parameters (
  fit_id          INTEGER NOT NULL REFERENCES model_fits (fit_id) ON DELETE CASCADE,
  name            TEXT NOT NULL,             -- e.g. compute_per_sample_s
  value           REAL NOT NULL,
  ci_low          REAL,                      -- 95% confidence interval; NULL when not fitted
  ci_high         REAL,
  unit            TEXT NOT NULL,             -- s, s/sample, s/byte, bytes/s, ...
  source          TEXT NOT NULL CHECK (source IN ('fitted', 'probe', 'run_start', 'fixed')),
  scope           TEXT NOT NULL DEFAULT '',  -- e.g. a network profile or an architecture
  UNIQUE (fit_id, name, scope)
);

-- Every calibration run a fit used, with its residual.
CREATE TABLE model_fit_runs (
  fit_id          INTEGER NOT NULL REFERENCES model_fits (fit_id) ON DELETE CASCADE,
  run_id          INTEGER NOT NULL REFERENCES runs (run_id),
  measured_iteration_s  REAL NOT NULL,
  fitted_iteration_s    REAL NOT NULL,
  PRIMARY KEY (fit_id, run_id)
) WITHOUT ROWID;

CREATE TRIGGER model_fit_runs_calibration_only BEFORE INSERT ON model_fit_runs
WHEN (SELECT split FROM runs WHERE run_id = NEW.run_id) IS NOT 'calibration'
BEGIN
  SELECT RAISE(ABORT, 'a model fit may use calibration runs only');
END;

CREATE TABLE model_fit_probes (
  fit_id          INTEGER NOT NULL REFERENCES model_fits (fit_id) ON DELETE CASCADE,
  link_probe_id   INTEGER NOT NULL REFERENCES link_probes (link_probe_id),
  PRIMARY KEY (fit_id, link_probe_id)
) WITHOUT ROWID;

CREATE TRIGGER model_fit_probes_calibration_only BEFORE INSERT ON model_fit_probes
WHEN (SELECT split FROM link_probes WHERE link_probe_id = NEW.link_probe_id) IS NOT 'calibration'
BEGIN
  SELECT RAISE(ABORT, 'a model fit may use calibration probes only');
END;

-- A model's prediction for one run, with its terms (seconds per iteration)
-- and the error against the run's steady-state epoch time. `split` must be
-- the run's own split: errors on calibration runs stay labelled so.
CREATE TABLE predictions (
  prediction_id   INTEGER PRIMARY KEY,
  fit_id          INTEGER NOT NULL REFERENCES model_fits (fit_id) ON DELETE CASCADE,
  run_id          INTEGER NOT NULL REFERENCES runs (run_id),
  split           TEXT NOT NULL CHECK (split IN ('calibration', 'validation')),
  iterations_per_epoch INTEGER NOT NULL CHECK (iterations_per_epoch >= 1),
  predicted_iteration_s REAL NOT NULL,
  predicted_epoch_s     REAL NOT NULL,
  compute_s       REAL NOT NULL,             -- forward + backward
  update_s        REAL NOT NULL,
  comm_s          REAL NOT NULL,             -- exchange on the critical path (exposed)
  hidden_comm_s   REAL NOT NULL DEFAULT 0,   -- exchange hidden behind backward (overlap)
  measured_epoch_s      REAL NOT NULL,       -- median of the run's steady epochs
  relative_error  REAL NOT NULL,             -- (predicted - measured) / measured
  UNIQUE (fit_id, run_id)
);

CREATE TRIGGER predictions_split_is_the_runs BEFORE INSERT ON predictions
WHEN NEW.split IS NOT (SELECT split FROM runs WHERE run_id = NEW.run_id)
BEGIN
  SELECT RAISE(ABORT, 'a prediction''s split must be its run''s split');
END;

-- The order of a sweep: runs are started in an order shuffled with
-- sweep_seed (execution.order = "shuffled"); sweep_position is 0-based.
ALTER TABLE attempts ADD COLUMN sweep_seed INTEGER;
ALTER TABLE attempts ADD COLUMN sweep_position INTEGER;

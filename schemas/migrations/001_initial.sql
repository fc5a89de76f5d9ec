-- dmlbench results database, version 1. Applied by
-- orchestrator/store/store.cc in one transaction together with `PRAGMA
-- user_version = 1`. Never edit an applied migration: add 002_*.sql instead.
-- Tables and views are described in schemas/database.md. Times: `_unix_s`
-- wall clock seconds since the epoch, `_s` seconds measured by the trainer's
-- monotonic clock.

-- One row per distinct experiment file text.
CREATE TABLE experiments (
  experiment_id   INTEGER PRIMARY KEY,
  name            TEXT NOT NULL,
  description     TEXT NOT NULL DEFAULT '',
  source_path     TEXT NOT NULL,
  matrix_text     TEXT NOT NULL,
  matrix_sha256   TEXT NOT NULL UNIQUE CHECK (length(matrix_sha256) = 64),
  first_used_unix_s REAL NOT NULL
);

-- Facts of a machine as Launcher::Prepare() found them. A machine whose
-- facts change (kernel upgrade, new MPI) gets a new row.
CREATE TABLE hosts (
  host_id         INTEGER PRIMARY KEY,
  name            TEXT NOT NULL,
  address         TEXT NOT NULL DEFAULT '',
  cpu_model       TEXT NOT NULL,
  cores           INTEGER NOT NULL CHECK (cores >= 0),
  memory_bytes    INTEGER NOT NULL CHECK (memory_bytes >= 0),
  kernel          TEXT NOT NULL,
  mpi_version     TEXT NOT NULL,
  provider        TEXT NOT NULL,
  tags_json       TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(tags_json)),
  first_seen_unix_s REAL NOT NULL,
  last_seen_unix_s  REAL NOT NULL,
  UNIQUE (name, address, cpu_model, cores, memory_bytes, kernel, mpi_version, provider, tags_json)
);

-- One row per run key (DESIGN.md section 5): the parameters as typed
-- columns, the split decided at plan time, the current status and the
-- provenance of the attempt that decided it.
CREATE TABLE runs (
  run_id          INTEGER PRIMARY KEY,
  run_key         TEXT NOT NULL UNIQUE CHECK (length(run_key) = 64),
  experiment_id   INTEGER NOT NULL REFERENCES experiments (experiment_id),
  architecture    TEXT NOT NULL CHECK (architecture IN ('ring', 'mpi', 'ps', 'p2p')),
  workers         INTEGER NOT NULL CHECK (workers >= 1),
  servers         INTEGER NOT NULL CHECK (servers >= 0),
  ranks           INTEGER NOT NULL CHECK (ranks >= 1),
  batch_size      INTEGER NOT NULL CHECK (batch_size >= 1),
  epochs          INTEGER NOT NULL CHECK (epochs >= 1),
  hidden          TEXT NOT NULL,             -- layer widths, "128,32"
  learning_rate   REAL NOT NULL CHECK (learning_rate > 0),
  overlap         INTEGER NOT NULL CHECK (overlap IN (0, 1)),
  bucket_bytes    INTEGER NOT NULL CHECK (bucket_bytes > 0),
  max_iterations_per_epoch INTEGER NOT NULL CHECK (max_iterations_per_epoch >= 0),
  dataset         TEXT NOT NULL,             -- "fashion-mnist" | "synthetic"
  seed            INTEGER NOT NULL,
  repetition      INTEGER NOT NULL CHECK (repetition >= 0),
  network         TEXT NOT NULL DEFAULT '',  -- profile name, '' = unshaped
  network_bandwidth_bits_per_s REAL NOT NULL DEFAULT 0,
  network_latency_s REAL NOT NULL DEFAULT 0,
  canonical_params TEXT NOT NULL,
  split           TEXT NOT NULL CHECK (split IN ('calibration', 'validation')),
  status          TEXT NOT NULL DEFAULT 'pending'
                  CHECK (status IN ('pending', 'running', 'complete', 'failed', 'interrupted')),
  attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  complete_attempt_id INTEGER REFERENCES attempts (attempt_id),
  -- provenance
  trainer_sha256  TEXT NOT NULL,
  dataset_sha256  TEXT NOT NULL,
  git_commit      TEXT,                      -- of the repository holding the matrix file; NULL outside git
  git_dirty       INTEGER CHECK (git_dirty IN (0, 1)),
  mpi_library_version TEXT,
  command_line    TEXT,
  start_unix_s    REAL,
  end_unix_s      REAL,
  exit_code       INTEGER,
  failure_reason  TEXT,
  stderr_tail     TEXT,
  parameter_checksum TEXT,
  CHECK (status <> 'complete' OR (complete_attempt_id IS NOT NULL AND parameter_checksum IS NOT NULL))
);
CREATE INDEX runs_by_experiment ON runs (experiment_id);
CREATE INDEX runs_by_shape ON runs (architecture, workers, batch_size);

-- The split is decided once, at plan time (DESIGN.md section 1, item 4).
CREATE TRIGGER runs_split_never_changes BEFORE UPDATE OF split ON runs
WHEN NEW.split <> OLD.split
BEGIN
  SELECT RAISE(ABORT, 'the split of a run never changes');
END;

-- Every try of a run, successful or not.
CREATE TABLE attempts (
  attempt_id      INTEGER PRIMARY KEY,
  run_id          INTEGER NOT NULL REFERENCES runs (run_id),
  number          INTEGER NOT NULL CHECK (number >= 1),
  status          TEXT NOT NULL DEFAULT 'running'
                  CHECK (status IN ('running', 'ok', 'failed', 'timed_out', 'interrupted')),
  start_unix_s    REAL NOT NULL,
  end_unix_s      REAL,
  exit_code       INTEGER,
  reason          TEXT,                      -- one line, NULL when ok
  stderr_tail     TEXT,                      -- kept when the attempt failed
  command_line    TEXT,
  hosts           TEXT,                      -- host names of the ranks, comma separated
  host_failure    INTEGER NOT NULL DEFAULT 0 CHECK (host_failure IN (0, 1)),
  -- from the trainer's run_start event
  mpi_library_version TEXT,
  world_size      INTEGER,
  parameters      INTEGER,
  iterations_per_epoch INTEGER,
  train_samples   INTEGER,
  test_samples    INTEGER,
  trainer_dataset_sha256 TEXT,
  threads         INTEGER,
  -- from the trainer's run_end event
  trainer_status  TEXT CHECK (trainer_status IN ('ok', 'error')),
  trainer_error   TEXT,
  parameter_checksum TEXT,
  total_wall_s    REAL,
  peak_rss_bytes  INTEGER,
  UNIQUE (run_id, number)
);

CREATE TABLE attempt_hosts (
  attempt_id      INTEGER NOT NULL REFERENCES attempts (attempt_id) ON DELETE CASCADE,
  host_id         INTEGER NOT NULL REFERENCES hosts (host_id),
  PRIMARY KEY (attempt_id, host_id)
);

-- One row per epoch event. Phase columns: over the worker ranks, each
-- rank's sum over the epoch (schemas/trainer-events.md).
CREATE TABLE epochs (
  attempt_id      INTEGER NOT NULL REFERENCES attempts (attempt_id) ON DELETE CASCADE,
  epoch           INTEGER NOT NULL CHECK (epoch >= 1),
  run_id          INTEGER NOT NULL REFERENCES runs (run_id),
  iterations      INTEGER NOT NULL,
  samples         INTEGER NOT NULL,
  wall_s          REAL NOT NULL,
  throughput_samples_per_s REAL NOT NULL,
  loss            REAL,
  test_accuracy   REAL,                      -- NULL when not evaluated
  eval_s          REAL,
  overlap_ratio   REAL,
  forward_max_s REAL, forward_mean_s REAL, forward_min_s REAL,
  backward_max_s REAL, backward_mean_s REAL, backward_min_s REAL,
  exchange_max_s REAL, exchange_mean_s REAL, exchange_min_s REAL,
  update_max_s REAL, update_mean_s REAL, update_min_s REAL,
  exposed_comm_max_s REAL, exposed_comm_mean_s REAL, exposed_comm_min_s REAL,
  comm_max_s REAL, comm_mean_s REAL, comm_min_s REAL,
  PRIMARY KEY (attempt_id, epoch)
);
CREATE INDEX epochs_by_run ON epochs (run_id);

-- Per epoch, per rank: the `ranks` array of the epoch event.
CREATE TABLE rank_phases (
  attempt_id      INTEGER NOT NULL,
  epoch           INTEGER NOT NULL,
  rank            INTEGER NOT NULL CHECK (rank >= 0),
  role            TEXT NOT NULL CHECK (role IN ('worker', 'server')),
  forward_s       REAL NOT NULL,
  backward_s      REAL NOT NULL,
  exchange_s      REAL NOT NULL,
  update_s        REAL NOT NULL,
  exposed_comm_s  REAL NOT NULL,
  comm_s          REAL NOT NULL,
  wait_s          REAL NOT NULL,
  bytes_sent      INTEGER NOT NULL,
  bytes_received  INTEGER NOT NULL,
  messages_sent   INTEGER NOT NULL,
  PRIMARY KEY (attempt_id, epoch, rank),
  FOREIGN KEY (attempt_id, epoch) REFERENCES epochs (attempt_id, epoch) ON DELETE CASCADE
) WITHOUT ROWID;

-- The epochs of complete runs only, with the run's parameters: what every
-- analysis should start from.
CREATE VIEW complete_epochs AS
SELECT r.run_id, r.run_key, r.experiment_id, r.split, r.architecture, r.workers, r.servers,
       r.batch_size, r.overlap, r.network, r.repetition, e.*
FROM runs r JOIN epochs e ON e.attempt_id = r.complete_attempt_id
WHERE r.status = 'complete';

-- Mean, sample standard deviation, min and max of epoch time and
-- throughput per configuration, over the epochs of complete runs.
CREATE VIEW run_summary AS
SELECT architecture, servers, workers, batch_size, overlap, network,
       count(DISTINCT run_id) AS runs,
       count(*) AS epochs,
       avg(wall_s) AS epoch_s_mean,
       CASE WHEN count(*) > 1
            THEN sqrt(max(0.0, (sum(wall_s * wall_s) - sum(wall_s) * sum(wall_s) / count(*)) / (count(*) - 1)))
       END AS epoch_s_stddev,
       min(wall_s) AS epoch_s_min,
       max(wall_s) AS epoch_s_max,
       avg(throughput_samples_per_s) AS throughput_mean,
       CASE WHEN count(*) > 1
            THEN sqrt(max(0.0, (sum(throughput_samples_per_s * throughput_samples_per_s)
                                - sum(throughput_samples_per_s) * sum(throughput_samples_per_s) / count(*))
                               / (count(*) - 1)))
       END AS throughput_stddev,
       min(throughput_samples_per_s) AS throughput_min,
       max(throughput_samples_per_s) AS throughput_max
FROM complete_epochs
GROUP BY architecture, servers, workers, batch_size, overlap, network;

-- Runs that did not complete, with the reason of their last attempt.
CREATE VIEW failures AS
SELECT r.run_id, r.run_key, r.architecture, r.workers, r.servers, r.batch_size, r.overlap,
       r.network, r.status, r.attempts, r.exit_code, r.failure_reason, r.stderr_tail,
       r.end_unix_s
FROM runs r
WHERE r.status IN ('failed', 'interrupted');

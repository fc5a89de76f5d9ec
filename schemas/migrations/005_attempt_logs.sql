-- dmlbench results database, version 5: the output of every attempt. Each
-- rank's standard output and error, and mpirun's own standard error, are
-- kept gzip-compressed in the directory beside the database named after it
-- (results.db -> results.db.logs/), one directory per attempt:
--   <run_key>/attempt-<number>/rank-<rank>.stdout.gz, rank-<rank>.stderr.gz, mpirun.stderr.gz
-- The rows below say what was kept; a database copied without that
-- directory still works, and `dmlbench logs` says the files are missing.

-- The attempt's directory, relative to the logs directory; NULL when the
-- attempt kept no output (its launch never started a job).
ALTER TABLE attempts ADD COLUMN log_dir TEXT;

CREATE TABLE attempt_logs (
  attempt_id      INTEGER NOT NULL REFERENCES attempts (attempt_id) ON DELETE CASCADE,
  rank            INTEGER CHECK (rank >= 0),                  -- NULL: mpirun's own stream
  stream          TEXT NOT NULL CHECK (stream IN ('stdout', 'stderr')),
  file            TEXT NOT NULL,                               -- relative to the logs directory
  bytes           INTEGER NOT NULL CHECK (bytes >= 0),         -- as the rank wrote them
  stored_bytes    INTEGER NOT NULL CHECK (stored_bytes >= 0),  -- compressed, on disk
  UNIQUE (attempt_id, rank, stream)
);
CREATE INDEX attempt_logs_by_attempt ON attempt_logs (attempt_id);

-- dmlbench results database, version 6: forgetting runs. `dmlbench forget
-- FILTER` removes runs with their attempts, epochs, per-rank phases, host
-- links, tags and logs; one row here per run it removed keeps what the run
-- was, what chose it and when.

CREATE TABLE forgotten_runs (
  run_key          TEXT NOT NULL CHECK (length(run_key) = 64),
  experiment       TEXT NOT NULL,              -- the experiment that first planned it
  architecture     TEXT NOT NULL,
  servers          INTEGER NOT NULL,
  workers          INTEGER NOT NULL,
  batch_size       INTEGER NOT NULL,
  repetition       INTEGER NOT NULL,
  network          TEXT NOT NULL,
  canonical_params TEXT NOT NULL,              -- every parameter, as runs.canonical_params
  split            TEXT NOT NULL,
  status           TEXT NOT NULL,              -- when it was forgotten
  attempts         INTEGER NOT NULL,
  tags             TEXT NOT NULL,              -- sorted, comma separated
  trainer_sha256   TEXT NOT NULL,
  filter           TEXT NOT NULL,              -- the filter that chose it
  forgotten_unix_s REAL NOT NULL
);
CREATE INDEX forgotten_runs_by_key ON forgotten_runs (run_key);

-- dmlbench results database, version 7: experiments share runs. A run (one
-- run key) belongs to every experiment file text that planned it: an edited
-- copy of a matrix shares the runs it has in common with the original, and
-- `dmlbench status` counts each experiment's runs through this table.
-- runs.experiment_id stays the experiment that first planned the run.
-- application_id marks the file as a dmlbench database ("dmlb"), so that a
-- database of another program is never given these tables.
PRAGMA application_id = 1684892770;

CREATE TABLE experiment_runs (
  experiment_id   INTEGER NOT NULL REFERENCES experiments (experiment_id) ON DELETE CASCADE,
  run_id          INTEGER NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  PRIMARY KEY (experiment_id, run_id)
) WITHOUT ROWID;
CREATE INDEX experiment_runs_by_run ON experiment_runs (run_id);

-- Until version 7 a run belonged only to the experiment that first planned it.
INSERT INTO experiment_runs (experiment_id, run_id) SELECT experiment_id, run_id FROM runs;

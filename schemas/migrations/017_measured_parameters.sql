-- dmlbench results database, version 17: a parameter measured, not fitted.
-- A model may take a parameter from a measurement of its own before the
-- fit (the CPU time of the one-worker calibration runs, the quota a
-- CPU-bound rank gets), stored with its interval but source 'measured',
-- so that a fit says which of its parameters the fit itself estimated
-- ('fitted') and which it only used. Rows stored before this version keep
-- the source they had. SQLite cannot change a CHECK in place: the table is
-- made anew with every row it had, under the same rowid (a fit's
-- parameters are read in rowid order).

ALTER TABLE model_parameters RENAME TO model_parameters_16;

CREATE TABLE model_parameters (
  fit_id          INTEGER NOT NULL REFERENCES model_fits (fit_id) ON DELETE CASCADE,
  name            TEXT NOT NULL,             -- e.g. compute_per_sample_s
  value           REAL NOT NULL,
  ci_low          REAL,                      -- 95% confidence interval; NULL when it has none
  ci_high         REAL,
  unit            TEXT NOT NULL,             -- s, s/sample, s/byte, bytes/s, ...
  source          TEXT NOT NULL CHECK (source IN ('fitted', 'measured', 'probe', 'run_start', 'fixed')),
  scope           TEXT NOT NULL DEFAULT '',  -- e.g. a network profile or an architecture
  UNIQUE (fit_id, name, scope)
);

INSERT INTO model_parameters (rowid, fit_id, name, value, ci_low, ci_high, unit, source, scope)
SELECT rowid, fit_id, name, value, ci_low, ci_high, unit, source, scope FROM model_parameters_16;

DROP TABLE model_parameters_16;

-- dmlbench results database, version 18: an interval for predictions that
-- extrapolate in the workers. Leaving one calibration configuration out
-- never asks a fit to predict more workers than it was fitted on, so its
-- residuals understate the error of a prediction beyond the calibration's
-- largest worker count (orchestrator/model/interval.h). A fit now also
-- carries, for predictions of more than `beyond_workers` workers, the
-- interval of the calibration configurations at the largest worker count
-- each predicted by a fit on fewer workers. beyond_workers = 0 is the
-- interval of every other prediction, as in version 16; rows stored before
-- this version all have it. SQLite cannot change a primary key in place:
-- the table is made anew with every row it had.

ALTER TABLE model_intervals RENAME TO model_intervals_17;

CREATE TABLE model_intervals (
  fit_id          INTEGER NOT NULL REFERENCES model_fits (fit_id) ON DELETE CASCADE,
  scope           TEXT NOT NULL DEFAULT '',  -- '' = every regime, else a scheme: 'ring', 'ps k=2', ...
  beyond_workers  INTEGER NOT NULL DEFAULT 0 CHECK (beyond_workers >= 0),  -- 0, or: predictions of more workers
  level           REAL NOT NULL CHECK (level > 0 AND level < 1),
  log_half_width  REAL NOT NULL CHECK (log_half_width >= 0),
  configurations  INTEGER NOT NULL CHECK (configurations >= 1),  -- left-out configurations it rests on
  PRIMARY KEY (fit_id, scope, beyond_workers)
) WITHOUT ROWID;

INSERT INTO model_intervals (fit_id, scope, beyond_workers, level, log_half_width, configurations)
SELECT fit_id, scope, 0, level, log_half_width, configurations FROM model_intervals_17;

DROP TABLE model_intervals_17;

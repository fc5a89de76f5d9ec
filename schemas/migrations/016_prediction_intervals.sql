-- dmlbench results database, version 16: prediction intervals. A fit
-- carries the interval of its predictions, from its calibration runs alone
-- (orchestrator/model/interval.h): each calibration configuration left out
-- in turn, the model fitted on the others and the left-out one predicted;
-- the absolute log ratios measured/predicted of those predictions give, by
-- split-conformal prediction, the half-width q of the interval
-- [p·e^-q, p·e^+q] of a prediction p at `level`. One row of scope '' serves
-- every regime; when the residuals differ by regime, each scheme with
-- enough configurations has a row of its own. A fit stored before this
-- version, or one with too few configurations for its level, has no row.
-- Each prediction stores its interval beside it (NULL without one).

CREATE TABLE model_intervals (
  fit_id          INTEGER NOT NULL REFERENCES model_fits (fit_id) ON DELETE CASCADE,
  scope           TEXT NOT NULL DEFAULT '',  -- '' = every regime, else a scheme: 'ring', 'ps k=2', ...
  level           REAL NOT NULL CHECK (level > 0 AND level < 1),
  log_half_width  REAL NOT NULL CHECK (log_half_width >= 0),
  configurations  INTEGER NOT NULL CHECK (configurations >= 1),  -- left-out configurations it rests on
  PRIMARY KEY (fit_id, scope)
) WITHOUT ROWID;

ALTER TABLE predictions ADD COLUMN interval_level REAL
  CHECK (interval_level IS NULL OR (interval_level > 0 AND interval_level < 1));
ALTER TABLE predictions ADD COLUMN predicted_epoch_low_s REAL;
ALTER TABLE predictions ADD COLUMN predicted_epoch_high_s REAL
  CHECK (predicted_epoch_high_s IS NULL OR predicted_epoch_high_s >= predicted_epoch_low_s);

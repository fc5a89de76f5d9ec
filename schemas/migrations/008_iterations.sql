-- dmlbench results database, version 8: the wall time of every iteration.
-- The trainer's epoch event carries rank 0's time of each iteration of the
-- epoch (`iteration_wall_us`, schemas/trainer-events.md); ingest stores one
-- row per iteration together with its epoch. Epochs stored from an older
-- trainer, and every epoch of a database older than this version, have no
-- rows here: readers must do without them. The rows belong to their epoch
-- (ON DELETE CASCADE), so whatever removes epochs — the next attempt of a
-- run, `dmlbench forget` — removes them too.

CREATE TABLE iterations (
  attempt_id      INTEGER NOT NULL,
  epoch           INTEGER NOT NULL,
  iteration       INTEGER NOT NULL CHECK (iteration >= 1),  -- 1-based, within the epoch
  wall_s          REAL NOT NULL CHECK (wall_s >= 0),          -- rank 0's, to the microsecond
  PRIMARY KEY (attempt_id, epoch, iteration),
  FOREIGN KEY (attempt_id, epoch) REFERENCES epochs (attempt_id, epoch) ON DELETE CASCADE
) WITHOUT ROWID;

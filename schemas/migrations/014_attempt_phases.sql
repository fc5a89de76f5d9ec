-- dmlbench results database, version 14: where each attempt's time went.
-- One row per phase of an attempt, in seconds, written when the attempt
-- ends, whatever its outcome: the orchestrator's steps (planning, preparing
-- the hosts, shaping the links, starting mpirun, waiting for it to exit,
-- storing the attempt) timed on its monotonic clock, and the trainer's
-- (MPI_Init, the dataset, setup, epochs, evaluation, teardown) from its
-- events (run_end's `phases`, each epoch's wall_s and eval_s;
-- schemas/trainer-events.md). Over a sweep's attempts the phases add up to
-- the sweep's wall time but for the little before its first attempt's plan
-- and after its last attempt; what each phase covers: schemas/database.md.
-- A phase the attempt never reached has no row. Attempts stored before this
-- version have none: readers must do without them. The rows belong to
-- their attempt (ON DELETE CASCADE). Epoch times are kept here too, summed,
-- because a retry removes its failed predecessor's epochs but not the time
-- it cost.

CREATE TABLE attempt_phases (
  attempt_id      INTEGER NOT NULL REFERENCES attempts (attempt_id) ON DELETE CASCADE,
  phase           TEXT NOT NULL CHECK (phase IN (
                    'host_preparation', 'plan_to_launch', 'link_shaping', 'launch', 'mpi_init',
                    'dataset_load', 'setup', 'warmup_epochs', 'steady_epochs', 'evaluation',
                    'between_epochs', 'teardown', 'mpirun_exit', 'ingest')),
  seconds         REAL NOT NULL CHECK (seconds >= 0),
  PRIMARY KEY (attempt_id, phase)
) WITHOUT ROWID;

-- Per experiment (the one that registered the run) and phase: how many
-- attempts had it, its seconds, and its share of all the experiment's
-- attempts' phases. The share of steady_epochs is the sweeps' efficiency:
-- the time the study measures over the time it cost.
CREATE VIEW phase_totals AS
WITH timed AS (
  SELECT r.experiment_id, p.phase, p.seconds
  FROM attempt_phases p JOIN attempts a USING (attempt_id) JOIN runs r USING (run_id)
)
SELECT e.name AS experiment, t.phase, count(*) AS attempts, sum(t.seconds) AS seconds,
       sum(t.seconds) / (SELECT sum(all_.seconds) FROM timed all_ WHERE all_.experiment_id = t.experiment_id)
         AS share
FROM timed t JOIN experiments e USING (experiment_id)
GROUP BY t.experiment_id, t.phase;

-- Where the sweeps' time went: per experiment, each phase of its attempts
-- (the phase_totals view over attempt_phases, schemas/database.md) with its
-- seconds and its share of all of them, in the order the phases happen in
-- an attempt. The share of steady_epochs — the time the study measures — is
-- the sweeps' efficiency.
WITH phase_order (phase, position) AS (
  VALUES ('host_preparation', 1), ('plan_to_launch', 2), ('link_shaping', 3), ('launch', 4), ('mpi_init', 5),
         ('dataset_load', 6), ('setup', 7), ('warmup_epochs', 8), ('steady_epochs', 9), ('evaluation', 10),
         ('between_epochs', 11), ('teardown', 12), ('mpirun_exit', 13), ('ingest', 14)
)
SELECT t.experiment, t.phase, t.attempts, round(t.seconds, 1) AS "time, s",
       round(100 * t.share, 1) AS "share, %"
FROM phase_totals t JOIN phase_order o USING (phase)
ORDER BY t.experiment, o.position;

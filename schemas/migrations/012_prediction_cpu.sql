-- dmlbench results database, version 12: a prediction's CPU account beside the run's.
-- Where a rank's CPU quota binds, its CPU time per iteration sets the
-- iteration, so a model that keeps a CPU account (corrected,
-- corrected+overlap) stores it with each prediction: the CPU time per
-- iteration it expects of the run's busiest worker and busiest server, what
-- it finds sets the iteration (`limited_by`: 'path', the compute and the wire
-- at full CPU speed, or 'worker CPU' / 'server CPU', that rank's CPU work over
-- its quota), and beside them what the run's ranks reported (the busiest
-- rank of each role per steady epoch, the median over those epochs; the
-- epoch events' cpu_s, schemas/trainer-events.md). NULL for models without
-- a CPU account, for a server in a scheme without one, for runs whose
-- trainer did not report CPU time, and in rows stored before this version.

ALTER TABLE predictions ADD COLUMN predicted_worker_cpu_s REAL
  CHECK (predicted_worker_cpu_s IS NULL OR predicted_worker_cpu_s >= 0);
ALTER TABLE predictions ADD COLUMN predicted_server_cpu_s REAL
  CHECK (predicted_server_cpu_s IS NULL OR predicted_server_cpu_s >= 0);
ALTER TABLE predictions ADD COLUMN limited_by TEXT
  CHECK (limited_by IS NULL OR limited_by IN ('path', 'worker CPU', 'server CPU'));
ALTER TABLE predictions ADD COLUMN measured_worker_cpu_s REAL
  CHECK (measured_worker_cpu_s IS NULL OR measured_worker_cpu_s >= 0);
ALTER TABLE predictions ADD COLUMN measured_server_cpu_s REAL
  CHECK (measured_server_cpu_s IS NULL OR measured_server_cpu_s >= 0);

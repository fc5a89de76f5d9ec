-- dmlbench results database, version 9: each rank's CPU time per epoch.
-- The trainer's epoch event carries, per rank, `cpu_s`: the CPU time of the
-- rank's process (every thread) over the epoch's iterations, which is what
-- a host's CPU quota charges (schemas/trainer-events.md). With it, a model
-- fits what a rank's work costs in CPU seconds directly instead of inferring
-- it from wall time, and a bound takes compute at the CPU the rank really
-- got. Rows stored before this version, or from an older trainer, are NULL.

ALTER TABLE rank_phases ADD COLUMN cpu_s REAL CHECK (cpu_s IS NULL OR cpu_s >= 0);

-- dmlbench results database, version 11: what each rank's CPU quota did per epoch.
-- The trainer's epoch event carries, per rank whose cgroup has a CPU quota
-- (an emulated host's, a container's), `quota_periods`, `throttled_periods`
-- and `throttled_s`: the quota periods of the epoch, those in which the
-- group ran out of its quota, and how long it was stopped (cgroup cpu.stat;
-- schemas/trainer-events.md). A rank throttled in most periods is bound by
-- its CPU share, not by its links; one throttled rarely is not. NULL where
-- the rank ran without a quota, and in rows stored before this version.

ALTER TABLE rank_phases ADD COLUMN quota_periods INTEGER CHECK (quota_periods IS NULL OR quota_periods >= 0);
ALTER TABLE rank_phases ADD COLUMN throttled_periods INTEGER
  CHECK (throttled_periods IS NULL OR (throttled_periods >= 0 AND throttled_periods <= quota_periods));
ALTER TABLE rank_phases ADD COLUMN throttled_s REAL CHECK (throttled_s IS NULL OR throttled_s >= 0);

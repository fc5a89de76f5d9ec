-- dmlbench results database, version 20: where a run is measured is part of
-- what it is. `system` names the hosts a run's measurements come from (a
-- name the matrix or the inventory gives, else the provider's default:
-- "local/<machine>", "cluster/<machine>/<cluster>", "ssh/<hosts>",
-- "slurm/<login machine>/<partition>"), and it is part of the run's key, so
-- the same configuration on another system is another run. Runs stored
-- before this version have NULL: where they ran was not recorded, and a
-- sweep anywhere finds them under the key they had (DESIGN.md section 5).

ALTER TABLE runs ADD COLUMN system TEXT CHECK (system IS NULL OR length(system) BETWEEN 1 AND 128);
CREATE INDEX runs_by_system ON runs (system);

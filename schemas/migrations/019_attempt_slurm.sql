-- dmlbench results database, version 19: the Slurm job of an attempt as
-- typed columns, which a user can SELECT and join (docs/slurm.md). Before
-- this version they were a shell comment after the command line,
-- "  # slurm job 12, step 12.3: COMPLETED (srun exit 0)"; the rows that
-- have one get its facts here, and the command line keeps it.

ALTER TABLE attempts ADD COLUMN slurm_job_id TEXT;   -- the allocation, "12"; NULL: not run through Slurm
ALTER TABLE attempts ADD COLUMN slurm_step_id TEXT;  -- "12.3"; NULL when no step of the trainer was launched
ALTER TABLE attempts ADD COLUMN slurm_nodes TEXT;    -- where its ranks ran, comma separated
ALTER TABLE attempts ADD COLUMN slurm_state TEXT;    -- as Slurm ended it: COMPLETED, FAILED, TIMEOUT, ...
ALTER TABLE attempts ADD COLUMN slurm_exit TEXT;     -- who said so and the code: "srun exit 0", "sacct exit 0:15"

-- "<command>  # slurm job J[, step S][ (mpirun's daemons)]: STATE (EXIT)"
UPDATE attempts SET
  slurm_job_id = substr(c, 1, instr(c || ' ', ' ') - 1),
  slurm_step_id = CASE WHEN instr(substr(c, 1, instr(c || ':', ':') - 1), ', step ') > 0
                       THEN substr(substr(c, 1, instr(c || ':', ':') - 1),
                                   instr(substr(c, 1, instr(c || ':', ':') - 1), ', step ') + 7) END,
  slurm_nodes = hosts,
  slurm_state = substr(e, 1, instr(e || ' ', ' ') - 1),
  slurm_exit = rtrim(substr(e, instr(e, ' (') + 2), ')')
FROM (SELECT id, c, substr(c, instr(c, ': ') + 2) AS e
      FROM (SELECT attempt_id AS id, substr(command_line, instr(command_line, '  # slurm job ') + 14) AS c
            FROM attempts WHERE instr(command_line, '  # slurm job ') > 0)) AS parsed
WHERE attempts.attempt_id = parsed.id;
UPDATE attempts SET slurm_job_id = rtrim(slurm_job_id, ',:') WHERE slurm_job_id IS NOT NULL;

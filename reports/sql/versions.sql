-- Versions: what built and ran the complete runs, and how many runs each.
SELECT 'trainer sha256' AS what, trainer_sha256 AS version, count(*) AS runs
FROM runs WHERE status = 'complete' GROUP BY trainer_sha256
UNION ALL
SELECT 'MPI library', coalesce(mpi_library_version, 'unknown'), count(*)
FROM runs WHERE status = 'complete' GROUP BY mpi_library_version
UNION ALL
SELECT 'git commit of the matrix', coalesce(git_commit || CASE git_dirty WHEN 1 THEN ' (dirty)' ELSE '' END, 'outside git'),
       count(*)
FROM runs WHERE status = 'complete' GROUP BY git_commit, git_dirty
UNION ALL
SELECT 'dataset sha256', dataset || ' ' || dataset_sha256, count(*)
FROM runs WHERE status = 'complete' GROUP BY dataset, dataset_sha256
ORDER BY 1, 2;

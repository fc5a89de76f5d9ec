-- The provenance footer: rows (what, value). The report adds the database's
-- own sha256 above these.
SELECT 'experiment ' || name AS what,
       source_path || ', matrix sha256 ' || matrix_sha256 || ', ' ||
         (SELECT count(*) FROM runs r WHERE r.experiment_id = e.experiment_id) || ' runs' AS value
FROM experiments e
UNION ALL
SELECT 'git commits', coalesce((SELECT group_concat(c, ', ') FROM (
         SELECT DISTINCT coalesce(git_commit, 'outside git') || CASE git_dirty WHEN 1 THEN ' (dirty)' ELSE '' END AS c
         FROM runs WHERE status = 'complete' ORDER BY c)), 'none')
UNION ALL
SELECT 'trainer sha256', coalesce((SELECT group_concat(t, ', ') FROM (
         SELECT DISTINCT trainer_sha256 AS t FROM runs WHERE status = 'complete' ORDER BY t)), 'none')
UNION ALL
SELECT 'runs (UTC)', coalesce((SELECT strftime('%Y-%m-%d %H:%M:%S', min(start_unix_s), 'unixepoch') || ' to ' ||
                                      strftime('%Y-%m-%d %H:%M:%S', max(end_unix_s), 'unixepoch')
                               FROM runs WHERE status = 'complete' AND start_unix_s IS NOT NULL), 'no complete run')
UNION ALL
SELECT 'schema version', user_version FROM pragma_user_version;

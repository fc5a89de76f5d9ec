-- The machines the complete runs ran on, with the CPU share each host was
-- given (tags.cpu_cores, emulated cluster) and how many attempts used it.
SELECT h.name AS host, h.provider, h.cpu_model AS CPU, h.cores,
       coalesce(json_extract(h.tags_json, '$.cpu_cores'), 'whole machine') AS "CPU share, cores",
       round(h.memory_bytes / 1073741824.0, 1) AS "memory, GiB", h.kernel, h.mpi_version AS MPI,
       count(DISTINCT ah.attempt_id) AS attempts
FROM hosts h
JOIN attempt_hosts ah ON ah.host_id = h.host_id
JOIN runs r ON r.complete_attempt_id = ah.attempt_id AND r.status = 'complete'
GROUP BY h.host_id
ORDER BY h.name, h.host_id;

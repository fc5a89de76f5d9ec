-- Links: each network profile of the complete runs as configured, and as
-- the latest calibration probe of the same configured rate measured it:
-- alpha (one-way latency) and B of t(m) = alpha + m/B.
WITH profiles AS (
  SELECT network, network_bandwidth_bits_per_s AS bw, network_latency_s AS lat, count(*) AS runs
  FROM runs WHERE status = 'complete' GROUP BY network, bw, lat
),
probes AS (
  SELECT bandwidth_bits_per_s AS bw, latency_s AS lat, max(time_unix_s) AS t FROM link_probes
  WHERE split = 'calibration' GROUP BY bw, lat
)
SELECT CASE WHEN p.network = '' THEN 'unshaped' ELSE p.network END AS network,
       CASE WHEN p.bw = 0 THEN 'unshaped' ELSE printf('%g Mbit/s', p.bw / 1e6) END AS "configured rate",
       round_sig(p.lat * 1e3, 3) AS "configured latency, ms",
       round_sig((SELECT min(alpha_s) FROM link_probes l WHERE l.bandwidth_bits_per_s = p.bw
                   AND l.latency_s = p.lat AND l.time_unix_s = q.t) * 1e6, 4) AS "probed α, µs",
       round_sig((SELECT min(bandwidth_bytes_per_s) FROM link_probes l WHERE l.bandwidth_bits_per_s = p.bw
                   AND l.latency_s = p.lat AND l.time_unix_s = q.t) * 8 / 1e6, 4) AS "probed B, Mbit/s",
       (SELECT count(*) FROM link_probes l WHERE l.bandwidth_bits_per_s = p.bw AND l.latency_s = p.lat
         AND l.time_unix_s = q.t) AS "message sizes probed",
       strftime('%Y-%m-%d %H:%M', q.t, 'unixepoch') AS "probed at (UTC)",
       p.runs
FROM profiles p LEFT JOIN probes q ON q.bw = p.bw AND q.lat = p.lat
ORDER BY p.bw, p.lat, p.network;

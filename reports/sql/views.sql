-- Temporary views that every SQL file of the report may use. They are
-- created on the report's read-only connection and vanish with it; the
-- database is never changed. The functions median, median_ci_low/high,
-- median_ci_coverage, quantile, cv, round_sig and link_time_s are the
-- report's own (reports/README.md).

-- Parameters that take more than one value among the complete runs: a
-- label names these and leaves out the ones every run shares.
CREATE TEMP VIEW report_varying AS
SELECT count(DISTINCT overlap) > 1 AS overlap,
       count(DISTINCT epochs) > 1 AS epochs,
       count(DISTINCT hidden) > 1 AS hidden,
       count(DISTINCT learning_rate) > 1 AS learning_rate,
       count(DISTINCT bucket_bytes) > 1 AS bucket_bytes,
       count(DISTINCT partition_bytes) > 1 AS partition_bytes,
       count(DISTINCT max_iterations_per_epoch) > 1 AS cap,
       count(DISTINCT dataset) > 1 AS dataset,
       count(DISTINCT trainer_sha256) > 1 AS trainer,
       count(DISTINCT network_latency_s) > 1 AS latency
FROM runs WHERE status = 'complete';

-- One row per complete run: its configuration and its steady-state times
-- (warm-up excluded: steady_epochs), each the median over the run's steady
-- epochs; phase times are per iteration, means over the worker ranks.
--   config       every parameter but seed and repetition (as run_summary, but
--                repetitions of synthetic data are one configuration)
--   but_workers  the same without workers (speedup), but_batch without the
--                batch and its iteration cap (settling), but_overlap without
--                overlap and bucket size (overlap off against on)
--   (runs.partition_bytes and runs.pulls_in_turn: a database older than
--   schema version 10 or 13 gets them, always 0, from a temporary view
--   `runs` over main.runs: report.cc)
--   scheme       "ring", "ps k=2", ...; scheme_order sorts them as the paper does
--   label        scheme, workers, batch, network and what else varies
CREATE TEMP VIEW report_runs AS
SELECT q.*,
       q.common || '|' || q.workers || '|' || q.batch_size || '|' || q.max_iterations_per_epoch || '|' ||
         q.overlap || '|' || q.bucket_bytes || '|' || q.partition_bytes || '|' || q.pulls_in_turn AS config,
       q.common || '|' || q.batch_size || '|' || q.max_iterations_per_epoch || '|' || q.overlap || '|' ||
         q.bucket_bytes || '|' || q.partition_bytes || '|' || q.pulls_in_turn AS but_workers,
       q.common || '|' || q.workers || '|' || q.overlap || '|' || q.bucket_bytes || '|' || q.partition_bytes ||
         '|' || q.pulls_in_turn AS but_batch,
       q.common || '|' || q.workers || '|' || q.batch_size || '|' || q.max_iterations_per_epoch || '|' ||
         q.partition_bytes || '|' || q.pulls_in_turn AS but_overlap,
       q.scheme || ' w=' || q.workers || ' b=' || q.batch_size || q.details AS label,
       q.scheme || ' b=' || q.batch_size || q.details AS series
FROM (
  SELECT r.run_id, r.split, r.architecture, r.servers, r.workers, r.batch_size, r.overlap, r.network,
         r.network_bandwidth_bits_per_s, r.network_latency_s, r.epochs, r.hidden, r.learning_rate,
         r.bucket_bytes, r.partition_bytes, r.pulls_in_turn, r.max_iterations_per_epoch, r.dataset, r.repetition,
         r.trainer_sha256,
         r.architecture || CASE WHEN r.architecture = 'ps' THEN ' k=' || r.servers ELSE '' END AS scheme,
         CASE r.architecture WHEN 'ps' THEN 0 WHEN 'p2p' THEN 10 WHEN 'ring' THEN 20 ELSE 30 END + r.servers
           AS scheme_order,
         r.architecture || '|' || r.servers || '|' || r.network || '|' || r.network_bandwidth_bits_per_s || '|' ||
           r.network_latency_s || '|' || r.epochs || '|' || r.hidden || '|' || r.learning_rate || '|' ||
           r.dataset || '|' || r.trainer_sha256 || '|' ||
           -- A synthetic dataset's checksum names its seed, which follows the
           -- repetition ("synthetic:SEED:SAMPLES"): only its size tells configurations apart.
           CASE WHEN r.dataset_sha256 LIKE 'synthetic:%'
                THEN substr(r.dataset_sha256, 11 + instr(substr(r.dataset_sha256, 11), ':'))
                ELSE r.dataset_sha256 END AS common,
         CASE WHEN r.network <> '' THEN ' ' || r.network ELSE '' END ||
         CASE WHEN v.overlap THEN CASE r.overlap WHEN 1 THEN ' overlap' ELSE '' END ELSE '' END ||
         CASE WHEN v.epochs THEN ' epochs=' || r.epochs ELSE '' END ||
         CASE WHEN v.hidden THEN ' hidden=' || r.hidden ELSE '' END ||
         CASE WHEN v.learning_rate THEN ' lr=' || r.learning_rate ELSE '' END ||
         CASE WHEN v.bucket_bytes THEN ' bucket=' || r.bucket_bytes ELSE '' END ||
         CASE WHEN v.partition_bytes THEN ' partition=' || r.partition_bytes ELSE '' END ||
         CASE r.pulls_in_turn WHEN 1 THEN ' pulls-in-turn' ELSE '' END ||
         CASE WHEN v.cap THEN ' cap=' || r.max_iterations_per_epoch ELSE '' END ||
         CASE WHEN v.dataset THEN ' ' || r.dataset ELSE '' END ||
         CASE WHEN v.latency THEN ' latency=' || r.network_latency_s ELSE '' END ||
         CASE WHEN v.trainer THEN ' trainer=' || substr(r.trainer_sha256, 1, 8) ELSE '' END AS details,
         count(*) AS steady_epochs,
         max(s.warmup_included) AS warmup_included,
         max(s.iterations) AS iterations,
         median(s.wall_s) AS epoch_s,
         median(s.wall_s / s.iterations) AS iteration_s,
         median(s.throughput_samples_per_s) AS samples_per_s,
         median((s.forward_mean_s + s.backward_mean_s) / s.iterations) AS compute_s,
         median(s.update_mean_s / s.iterations) AS update_s,
         median(s.exchange_mean_s / s.iterations) AS exchange_s,
         median(max(0, s.comm_mean_s - s.exposed_comm_mean_s) / s.iterations) AS hidden_comm_s
  FROM runs r JOIN steady_epochs s ON s.run_id = r.run_id, report_varying v
  WHERE s.iterations > 0
  GROUP BY r.run_id
) q;

-- One row per configuration (and split): the median over its runs, the
-- median's 95% interval from order statistics and its exact coverage, the
-- coefficient of variation between runs.
CREATE TEMP VIEW report_configurations AS
SELECT config, split, min(label) AS label, min(series) AS series, min(scheme) AS scheme,
       min(scheme_order) AS scheme_order, min(architecture) AS architecture, min(servers) AS servers,
       min(workers) AS workers, min(batch_size) AS batch_size, min(overlap) AS overlap, min(network) AS network,
       min(network_bandwidth_bits_per_s) AS bandwidth, min(max_iterations_per_epoch) AS cap,
       min(but_workers) AS but_workers, min(but_batch) AS but_batch, min(but_overlap) AS but_overlap,
       count(*) AS n, max(warmup_included) AS warmup_included, median(iterations) AS iterations,
       median(epoch_s) AS epoch_s, median_ci_low(epoch_s) AS epoch_s_low, median_ci_high(epoch_s) AS epoch_s_high,
       median_ci_coverage(epoch_s) AS coverage, cv(epoch_s) AS epoch_cv,
       median(samples_per_s) AS samples_per_s, median_ci_low(samples_per_s) AS samples_per_s_low,
       median_ci_high(samples_per_s) AS samples_per_s_high,
       median(compute_s) AS compute_s, median(update_s) AS update_s, median(exchange_s) AS exchange_s,
       median(hidden_comm_s) AS hidden_comm_s
FROM report_runs
GROUP BY config, split;

-- The latest fit of each model, in the order models.h lists them.
CREATE TEMP VIEW report_fits AS
SELECT model, max(fit_id) AS fit_id,
       CASE model WHEN 'paper2019' THEN 1 WHEN 'corrected' THEN 2 WHEN 'corrected+overlap' THEN 3
                  WHEN 'linear' THEN 4 ELSE 5 END AS model_order
FROM model_fits GROUP BY model;

-- Each model's prediction of each configuration (the latest fit's, stored
-- by `dmlbench model validate`), its terms per iteration, its error against
-- the measured median, and the link time of the configuration's bound.
CREATE TEMP VIEW report_predictions AS
SELECT c.config, c.split, f.model, f.model_order, f.fit_id,
       median(p.predicted_epoch_s) AS predicted_epoch_s,
       median(p.predicted_iteration_s) AS predicted_iteration_s,
       c.batch_size * c.workers / median(p.predicted_iteration_s) AS predicted_samples_per_s,
       median(p.compute_s) AS compute_s, median(p.update_s) AS update_s, median(p.comm_s) AS comm_s,
       median(p.hidden_comm_s) AS hidden_comm_s,
       median(p.predicted_epoch_s) / c.epoch_s - 1 AS relative_error,
       median(link_time_s(r.run_id)) AS link_s
FROM report_configurations c
JOIN report_runs r ON r.config = c.config AND r.split = c.split
JOIN predictions p ON p.run_id = r.run_id
JOIN report_fits f ON f.fit_id = p.fit_id
GROUP BY c.config, c.split, f.model;

-- Each validation configuration's prediction interval per model (its
-- latest fit's; the median over the configuration's runs of the bounds),
-- beside its measured median. Only the interval sections read it, so that a
-- database older than the intervals (schema 15 and before) loses those
-- alone.
CREATE TEMP VIEW report_interval_points AS
SELECT c.config, c.label, c.scheme, c.scheme_order, c.bandwidth, c.network, c.batch_size, c.overlap, c.workers,
       f.model, f.model_order, c.epoch_s AS measured,
       median(p.predicted_epoch_s) AS predicted, median(p.predicted_epoch_low_s) AS low,
       median(p.predicted_epoch_high_s) AS high, max(p.interval_level) AS level
FROM report_configurations c
JOIN report_runs r ON r.config = c.config AND r.split = c.split
JOIN predictions p ON p.run_id = r.run_id
JOIN report_fits f ON f.fit_id = p.fit_id
WHERE c.split = 'validation' AND p.predicted_epoch_low_s IS NOT NULL
GROUP BY c.config, f.model;

-- One complete run per scheme, for the per-iteration figure: a typical run
-- of the scheme's most demanding common setup. Its configuration has overlap
-- off (unless the scheme only ran with it on), the most workers, the fastest
-- link (unshaped counts as fastest), the batch size most of the scheme's runs
-- used, then the most runs; of that configuration's runs, the one with the
-- median steady epoch time (the lower of the two middle ones for an even
-- count; ties by run_id). `panel` numbers the schemes in scheme_order.
CREATE TEMP VIEW report_series_runs AS
WITH candidates AS (
  SELECT r.run_id, r.scheme, r.scheme_order, r.label, r.config, r.overlap, r.workers, r.batch_size,
         CASE WHEN r.network_bandwidth_bits_per_s > 0 THEN r.network_bandwidth_bits_per_s ELSE 1e300 END
           AS bandwidth,
         count(*) OVER (PARTITION BY r.scheme, r.batch_size) AS batch_runs,
         count(*) OVER (PARTITION BY r.config) AS config_runs,
         row_number() OVER (PARTITION BY r.config ORDER BY r.epoch_s, r.run_id) AS position
  FROM report_runs r
),
configurations AS (
  SELECT config,
         row_number() OVER (PARTITION BY scheme ORDER BY overlap, workers DESC, bandwidth DESC, batch_runs DESC,
                                                         config_runs DESC, batch_size, config) AS choice
  FROM candidates WHERE position = 1
)
SELECT c.run_id, c.scheme, c.scheme_order, c.label, row_number() OVER (ORDER BY c.scheme_order) AS panel
FROM candidates c JOIN configurations k ON k.config = c.config AND k.choice = 1
WHERE c.position = (c.config_runs + 1) / 2;

-- One row per configuration (and split), for the throughput figure: its
-- panel, one per scheme and network (panel_row numbers the schemes in
-- scheme_order, panel_column the networks from the slowest), and its series
-- in that panel (configurations that differ only in workers), numbered
-- from the one with the most configurations, then by batch size and
-- overlap. `variant` is the series' name without the panel's scheme and
-- network ("b=100 overlap cap=40").
CREATE TEMP VIEW report_throughput_series AS
SELECT config, split, series,
       dense_rank() OVER (ORDER BY scheme_order, bandwidth, network) AS panel,
       scheme || CASE WHEN network <> '' THEN ', ' || network ELSE '' END AS panel_title,
       dense_rank() OVER (ORDER BY scheme_order) AS panel_row,
       dense_rank() OVER (ORDER BY bandwidth, network) AS panel_column,
       dense_rank() OVER (PARTITION BY scheme_order, bandwidth, network
                          ORDER BY configurations DESC, batch_size, overlap, series) AS series_in_panel,
       'b=' || batch_size ||
         substr(series, length(scheme || ' b=' || batch_size || CASE WHEN network <> '' THEN ' ' || network ELSE '' END) + 1)
         AS variant
FROM (SELECT c.*, count(*) OVER (PARTITION BY c.series) AS configurations FROM report_configurations c);

-- One row per configuration and CPU share of the runs `model recommend` was
-- checked on (experiment recommend-validation, scripts/recommend-validation):
-- the verdict the recommendation gave it and the goal it was asked (its
-- runs' tags: recommended-N, its rank, or ruled-out; epochs-E and
-- deadline-Ds, the epochs to train and the deadline), its type (the hosts' CPU share, the run's link),
-- hosts, the measured median epoch over its runs with that median's 95%
-- interval, and the prediction of the fit that made the recommendation (the
-- latest fit with predictions of these runs: model validate --fit N) with
-- its prediction interval. core_s: hosts × share × epoch, the cost of an
-- epoch in core-seconds (the catalog prices every type per core-hour alike).
CREATE TEMP VIEW report_recommendation AS
WITH checked AS (
  SELECT r.run_id, r.scheme, r.scheme_order, r.architecture, r.servers, r.workers, r.batch_size, r.network,
         r.network_bandwidth_bits_per_s AS bandwidth, r.epoch_s,
         (SELECT max(CAST(json_extract(h.tags_json, '$.cpu_cores') AS REAL))
            FROM runs x JOIN attempt_hosts ah ON ah.attempt_id = x.complete_attempt_id JOIN hosts h USING (host_id)
           WHERE x.run_id = r.run_id) AS cpu,
         (SELECT min(t.tag) FROM run_tags t
           WHERE t.run_id = r.run_id AND (t.tag LIKE 'recommended-%' OR t.tag = 'ruled-out')) AS verdict,
         (SELECT max(CAST(substr(t.tag, 8) AS INTEGER)) FROM run_tags t
           WHERE t.run_id = r.run_id AND t.tag LIKE 'epochs-%') AS epochs,
         (SELECT max(CAST(rtrim(substr(t.tag, 10), 's') AS REAL)) FROM run_tags t
           WHERE t.run_id = r.run_id AND t.tag LIKE 'deadline-%') AS deadline_s
  FROM report_runs r
  WHERE r.split = 'validation' AND r.run_id IN (
    SELECT er.run_id FROM experiment_runs er JOIN experiments e USING (experiment_id)
     WHERE e.name = 'recommend-validation')
),
fit AS (SELECT max(p.fit_id) AS fit_id FROM predictions p WHERE p.run_id IN (SELECT run_id FROM checked))
SELECT c.verdict, c.epochs, c.deadline_s, c.scheme, min(c.scheme_order) AS scheme_order, c.workers, c.batch_size, c.network, c.bandwidth,
       c.cpu, c.workers + CASE c.architecture WHEN 'ps' THEN c.servers ELSE 0 END AS hosts,
       count(*) AS n, median(c.epoch_s) AS epoch_s, median_ci_low(c.epoch_s) AS epoch_s_low,
       median_ci_high(c.epoch_s) AS epoch_s_high, max(p.fit_id) AS fit_id,
       max(p.predicted_epoch_s) AS predicted_epoch_s, max(p.predicted_epoch_low_s) AS predicted_low_s,
       max(p.predicted_epoch_high_s) AS predicted_high_s, max(p.interval_level) AS interval_level
FROM checked c
LEFT JOIN predictions p ON p.run_id = c.run_id AND p.fit_id = (SELECT fit_id FROM fit)
GROUP BY c.verdict, c.epochs, c.deadline_s, c.architecture, c.servers, c.workers, c.batch_size, c.network, c.bandwidth, c.cpu;

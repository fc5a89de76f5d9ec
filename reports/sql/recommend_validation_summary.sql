-- The recommendation against the measurement, over the configurations it
-- was checked on: how many measured medians the prediction intervals hold
-- (against the intervals' level), Kendall's tau between the predicted and
-- the measured order of the epoch time and of the cost (hosts × share ×
-- epoch), and how many recommended configurations met the deadline and
-- ruled-out ones missed it, as measured.
SELECT count(*) AS configurations, sum(n) AS runs, max(fit_id) AS fit,
       round(100 * max(interval_level)) AS "interval level, %",
       sum(epoch_s BETWEEN predicted_low_s AND predicted_high_s) AS "inside the interval",
       round(100.0 * sum(epoch_s BETWEEN predicted_low_s AND predicted_high_s) / count(*), 1) AS "coverage, %",
       round(kendall_tau(predicted_epoch_s, epoch_s), 3) AS "Kendall's tau, epoch time",
       round(kendall_tau(hosts * cpu * predicted_epoch_s, hosts * cpu * epoch_s), 3) AS "Kendall's tau, cost",
       sum(verdict LIKE 'recommended-%' AND epochs * epoch_s <= deadline_s) || ' of ' ||
         sum(verdict LIKE 'recommended-%') AS "recommended that met the deadline",
       sum(verdict = 'ruled-out' AND epochs * epoch_s > deadline_s) || ' of ' || sum(verdict = 'ruled-out')
         AS "ruled out that missed it"
FROM report_recommendation
WHERE predicted_low_s IS NOT NULL;

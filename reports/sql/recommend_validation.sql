-- The configurations `model recommend` was checked on
-- (scripts/recommend-validation), cheapest predicted first: what the
-- recommendation said of each, its type (CPU share and link), the measured
-- median epoch over its runs with its 95% interval, the prediction of the
-- recommendation's fit with its prediction interval and whether that holds
-- the measured median, the total of the asked epochs at the measured epoch
-- against the deadline, and the ranks of the cost (hosts × share × epoch)
-- as predicted and as measured.
SELECT coalesce(verdict, '') AS recommendation,
       scheme || ' w=' || workers || ' b=' || batch_size AS configuration,
       'cpu' || cpu || '-' || network AS type, hosts, n AS runs,
       round_sig(epoch_s, 4) AS "measured epoch time, s",
       '[' || round_sig(epoch_s_low, 4) || ', ' || round_sig(epoch_s_high, 4) || ']' AS "95% interval, s",
       round_sig(predicted_epoch_s, 4) AS "predicted epoch time, s",
       CASE WHEN predicted_low_s IS NULL THEN ''
            ELSE '[' || round_sig(predicted_low_s, 4) || ', ' || round_sig(predicted_high_s, 4) || ']' END
         AS "prediction interval, s",
       CASE WHEN predicted_low_s IS NULL THEN ''
            WHEN epoch_s BETWEEN predicted_low_s AND predicted_high_s THEN 'yes' ELSE 'no' END AS "inside",
       round(100 * (predicted_epoch_s / epoch_s - 1), 1) AS "error, %",
       round_sig(epochs * epoch_s, 3) AS "total, s", deadline_s AS "deadline, s",
       CASE WHEN epochs * epoch_s <= deadline_s THEN 'yes' ELSE 'no' END AS "meets the deadline",
       rank() OVER (ORDER BY hosts * cpu * predicted_epoch_s) AS "predicted cost rank",
       rank() OVER (ORDER BY hosts * cpu * epoch_s) AS "measured cost rank"
FROM report_recommendation
ORDER BY hosts * cpu * predicted_epoch_s, scheme_order, workers;

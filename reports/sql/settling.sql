-- The settling experiment: the same setup at several batch sizes. Halving
-- the batch doubles the iterations, so the exchanges, of an epoch: the
-- per-iteration accounting (corrected) follows; the per-epoch accounting of
-- the paper (paper2019: communication once per epoch) does not.
WITH families AS (
  SELECT but_batch FROM report_configurations GROUP BY but_batch HAVING count(DISTINCT batch_size) > 1
)
SELECT c.label AS configuration, c.split, c.batch_size AS batch, round(c.iterations) AS "iterations per epoch",
       CASE WHEN c.n = 1 THEN round_sig(c.epoch_s, 4) || ''
            ELSE round_sig(c.epoch_s, 4) || ' [' || round_sig(c.epoch_s_low, 4) || ', ' ||
                 round_sig(c.epoch_s_high, 4) || ']'
       END AS "measured epoch time, s: median [95% interval]",
       round_sig(max(CASE p.model WHEN 'corrected' THEN p.predicted_epoch_s END), 4) AS "per-iteration model (corrected), s",
       round(100 * max(CASE p.model WHEN 'corrected' THEN p.relative_error END), 1) AS "per-iteration model: error %",
       round_sig(max(CASE p.model WHEN 'paper2019' THEN p.predicted_epoch_s END), 4) AS "per-epoch model (paper2019), s",
       round(100 * max(CASE p.model WHEN 'paper2019' THEN p.relative_error END), 1) AS "per-epoch model: error %"
FROM report_configurations c
JOIN families f ON f.but_batch = c.but_batch
LEFT JOIN report_predictions p ON p.config = c.config AND p.split = c.split
GROUP BY c.config, c.split
ORDER BY c.scheme_order, c.bandwidth, c.network, c.workers, c.overlap, c.but_batch, c.batch_size;

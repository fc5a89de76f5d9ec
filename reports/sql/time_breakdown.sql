-- Figure "time_breakdown": per iteration, compute (forward + backward),
-- update, exposed communication (the exchange on the critical path) and
-- hidden communication (in flight behind compute), measured beside the
-- corrected+overlap model's terms, for every configuration run with overlap
-- both off and on.
WITH pairs AS (
  SELECT but_overlap FROM report_configurations GROUP BY but_overlap HAVING count(DISTINCT overlap) = 2
),
bars AS (
  SELECT c.scheme_order, c.but_overlap, c.overlap, 0 AS modelled,
         c.label || ' measured' AS bar,
         1e3 * c.compute_s AS compute_ms, 1e3 * c.update_s AS update_ms,
         1e3 * c.exchange_s AS exposed_ms, 1e3 * c.hidden_comm_s AS hidden_ms
  FROM report_configurations c JOIN pairs USING (but_overlap)
  UNION ALL
  SELECT c.scheme_order, c.but_overlap, c.overlap, 1,
         c.label || ' model',
         1e3 * p.compute_s, 1e3 * p.update_s, 1e3 * p.comm_s, 1e3 * p.hidden_comm_s
  FROM report_configurations c JOIN pairs USING (but_overlap)
  JOIN report_predictions p ON p.config = c.config AND p.split = c.split AND p.model = 'corrected+overlap'
)
SELECT 'bars' AS block, bar, compute_ms, update_ms, exposed_ms, hidden_ms
FROM bars
ORDER BY scheme_order, but_overlap, overlap, modelled;

-- Figure "time_breakdown": per iteration, compute (forward + backward),
-- update, exposed communication (the exchange on the critical path) and
-- hidden communication (in flight behind compute), measured beside the
-- corrected+overlap model's terms, for every configuration run with overlap
-- both off and on. One bar per row; `pair` numbers the configurations
-- (overlap off and on), `configuration` names one without its overlap.
WITH pairs AS (
  SELECT but_overlap, min(scheme_order) AS scheme_order, min(scheme) AS scheme,
         min(CASE WHEN overlap = 0 THEN label END) AS label
  FROM report_configurations GROUP BY but_overlap HAVING count(DISTINCT overlap) = 2
),
bars AS (
  SELECT c.but_overlap, c.overlap, 0 AS modelled,
         c.label || ' measured' AS bar,
         1e3 * c.compute_s AS compute_ms, 1e3 * c.update_s AS update_ms,
         1e3 * c.exchange_s AS exposed_ms, 1e3 * c.hidden_comm_s AS hidden_ms
  FROM report_configurations c JOIN pairs USING (but_overlap)
  UNION ALL
  SELECT c.but_overlap, c.overlap, 1,
         c.label || ' model',
         1e3 * p.compute_s, 1e3 * p.update_s, 1e3 * p.comm_s, 1e3 * p.hidden_comm_s
  FROM report_configurations c JOIN pairs USING (but_overlap)
  JOIN report_predictions p ON p.config = c.config AND p.split = c.split AND p.model = 'corrected+overlap'
)
SELECT 'bars' AS block, b.bar, b.compute_ms, b.update_ms, b.exposed_ms, b.hidden_ms,
       dense_rank() OVER (ORDER BY s.scheme_order, s.but_overlap) AS pair,
       s.scheme AS scheme,
       -- The label of overlap off: scheme, then what the pair shares.
       substr(s.label, length(s.scheme) + 2) AS configuration,
       CASE b.overlap WHEN 1 THEN 'on' ELSE 'off' END AS overlap,
       CASE b.modelled WHEN 1 THEN 'model' ELSE 'measured' END AS source
FROM bars b JOIN pairs s USING (but_overlap)
ORDER BY s.scheme_order, s.but_overlap, b.overlap, b.modelled;

-- Figure "predicted_vs_measured": per model and split, each configuration's
-- measured median epoch time and the model's prediction. Log axes cannot
-- show a prediction of zero or less (an extrapolated line can give one):
-- such points are left out here and stay in the tables.
SELECT p.model || ' ' || p.split AS block,
       p.model_order AS model, p.model AS model_title,
       CASE p.split WHEN 'calibration' THEN 1 ELSE 2 END AS split, p.split AS split_title,
       c.epoch_s AS measured_epoch_s, p.predicted_epoch_s
FROM report_predictions p JOIN report_configurations c ON c.config = p.config AND c.split = p.split
WHERE p.predicted_epoch_s > 0 AND c.epoch_s > 0
ORDER BY p.model_order, p.split, c.epoch_s, c.label;

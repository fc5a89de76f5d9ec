-- Runs that did not complete, with the reason of their last attempt.
SELECT architecture || CASE WHEN architecture = 'ps' THEN ' k=' || servers ELSE '' END ||
         ' w=' || workers || ' b=' || batch_size AS run,
       network, status, attempts, coalesce(failure_reason, '') AS reason
FROM failures
ORDER BY run_id;

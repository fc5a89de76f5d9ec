-- dmlbench results database, version 15: a note on an attempt. An attempt
-- that succeeded may still hold something its numbers do not say by
-- themselves: an epoch far slower than the run's other steady epochs
-- (more than 3 times their median), as a link down for seconds or a
-- stalled host leaves. The note says which epoch and by how much; NULL
-- when there is nothing to note. `dmlbench status` lists the complete runs
-- whose attempt has one, `dmlbench logs` prints it with the attempt.

ALTER TABLE attempts ADD COLUMN note TEXT;

-- dmlbench results database, version 4: tags. A run carries the tags of the
-- experiment file's [experiment] tags and of `dmlbench run --tag NAME`, added
-- by every sweep that selected the run (schemas/matrix.md); `--only tag=NAME`
-- and `compare` choose runs by them.

CREATE TABLE run_tags (
  run_id          INTEGER NOT NULL REFERENCES runs (run_id),
  tag             TEXT NOT NULL CHECK (length(tag) BETWEEN 1 AND 64),
  tagged_unix_s   REAL NOT NULL,             -- when a sweep first gave the run this tag
  PRIMARY KEY (run_id, tag)
) WITHOUT ROWID;
CREATE INDEX run_tags_by_tag ON run_tags (tag);

-- One row per run: who planned it, what it is, how it stands, its tags
-- (sorted, comma separated, '' for none).
CREATE VIEW run_overview AS
SELECT r.run_id, r.run_key, r.experiment_id, e.name AS experiment, r.architecture, r.servers, r.workers,
       r.batch_size, r.epochs, r.hidden, r.learning_rate, r.overlap, r.bucket_bytes,
       r.max_iterations_per_epoch, r.dataset, r.network, r.seed, r.repetition, r.split, r.status,
       r.attempts, r.trainer_sha256,
       coalesce((SELECT group_concat(tag, ',') FROM (SELECT tag FROM run_tags t
                                                     WHERE t.run_id = r.run_id ORDER BY tag)), '') AS tags
FROM runs r JOIN experiments e USING (experiment_id);

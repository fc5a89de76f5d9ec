-- dmlbench results database, version 2: link calibration. Written by
-- `dmlbench cluster probe` (orchestrator/launch/cluster/link_probe.cc): an MPI
-- ping-pong between two emulated hosts over message sizes 1 B .. 4 MiB. One
-- row per message size; every row of one probe carries the same fit of
-- t(m) = alpha + m/B over all its sizes, so the performance model can read
-- alpha and B per profile, and the points they came from.

CREATE TABLE link_probes (
  link_probe_id          INTEGER PRIMARY KEY,
  profile                TEXT NOT NULL,          -- profile name, "100mbit-0.1ms" when unnamed
  bandwidth_bits_per_s   REAL NOT NULL CHECK (bandwidth_bits_per_s >= 0),  -- configured; 0 = unshaped
  latency_s              REAL NOT NULL CHECK (latency_s >= 0),              -- configured one-way delay
  message_bytes          INTEGER NOT NULL CHECK (message_bytes >= 1),
  repetitions            INTEGER NOT NULL CHECK (repetitions >= 1),
  median_one_way_s       REAL NOT NULL CHECK (median_one_way_s > 0),        -- half the median round trip
  alpha_s                REAL NOT NULL,                                     -- fitted latency
  bandwidth_bytes_per_s  REAL NOT NULL CHECK (bandwidth_bytes_per_s > 0),   -- fitted B
  time_unix_s            REAL NOT NULL,          -- when the probe ran; one value per probe
  hosts                  TEXT NOT NULL           -- the two hosts, "dmlb-main-h1,dmlb-main-h2"
);

CREATE INDEX link_probes_by_profile ON link_probes (profile, time_unix_s);

#!/usr/bin/env python3
"""Where a rank's CPU goes, from the runs' own reports: a linear fit of each
rank's CPU time per iteration (rank_phases.cpu_s, every steady epoch of the
calibration runs) on what it did in that epoch.

    cpu - compute = own_bytes * per_own_byte
                  + job_bytes_per_rank * per_job_byte[link]
                  + wait * per_second_waited[link]
                  + waits * per_wait

  compute             the latest corrected fit's cpu_overhead_s + cpu_per_sample_s b
                      (workers; a server computes nothing)
  own_bytes           bytes the rank sent and received (its own counters)
  job_bytes_per_rank  what the job's links carry per iteration over its
                      ranks (ps 2 w W / (w + k), ring and p2p 2 (w - 1) W / w;
                      the kernel's deferred work on it lands on whichever
                      rank is on a CPU, models.cc)
  wait                the rank's wall time per iteration waiting on MPI
  waits               the waits it sleeps through per iteration (ring
                      2 (w - 1) steps, p2p and a ps worker 2, a server 1)

Only ranks that used less than 3/4 of their host's CPU quota: at the quota
a rank's report is the quota, not what it would have used. mpi is left
out: its counters report W each way whatever libnbc sends. Unweighted
least squares on relative residuals; intervals are +-1.96 standard errors.
Prints the coefficients, then the fitted over the measured CPU per
configuration and role.

    bench/analysis/cpu_account.py DB [--split calibration|validation]
"""
import argparse
import math
import sqlite3
from collections import defaultdict

FEATURES = ["own bytes (ms/MB)", "job bytes @ {} (ms/MB)", "waiting @ {} (ms/ms)", "per wait (ms)"]


def solve(a, b):
    """Gauss-Jordan with partial pivoting: x with a x = b, and a's inverse."""
    n = len(a)
    m = [row[:] + [b[i]] + [1.0 if i == j else 0.0 for j in range(n)] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        if abs(m[c][c]) < 1e-300:
            raise SystemExit("cpu_account: the reports cannot tell the terms apart (singular normal equations)")
        pivot = m[c][c]
        m[c] = [v / pivot for v in m[c]]
        for r in range(n):
            if r != c and m[r][c] != 0:
                f = m[r][c]
                m[r] = [v - f * w for v, w in zip(m[r], m[c])]
    return [m[i][n] for i in range(n)], [m[i][n + 1:] for i in range(n)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("db")
    parser.add_argument("--split", default="calibration", choices=["calibration", "validation"])
    args = parser.parse_args()
    con = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)

    fit = con.execute("SELECT max(fit_id) FROM model_fits WHERE model = 'corrected'").fetchone()[0]
    if fit is None:
        raise SystemExit(f"cpu_account: {args.db} has no fit of corrected: run `dmlbench model fit` first")
    constants = dict(con.execute("SELECT name, value FROM model_parameters WHERE fit_id = ? AND name IN "
                                 "('cpu_overhead_s', 'cpu_per_sample_s')", (fit,)).fetchall())
    columns = {row[1] for row in con.execute("PRAGMA table_info(runs)")}
    turn = "r.pulls_in_turn = 0" if "pulls_in_turn" in columns else "1"
    parts = "r.partition_bytes = 0" if "partition_bytes" in columns else "1"
    rows = con.execute(f"""
        SELECT r.architecture, r.servers, r.network, r.workers, r.batch_size, rp.role, se.iterations,
               rp.cpu_s, rp.wait_s, rp.bytes_sent + rp.bytes_received, 4.0 * a.parameters,
               (SELECT max(CAST(json_extract(h.tags_json, '$.cpu_cores') AS REAL))
                  FROM attempt_hosts ah JOIN hosts h USING (host_id) WHERE ah.attempt_id = se.attempt_id),
               se.wall_s
        FROM steady_epochs se JOIN runs r ON r.run_id = se.run_id JOIN attempts a ON a.attempt_id = se.attempt_id
        JOIN rank_phases rp ON rp.attempt_id = se.attempt_id AND rp.epoch = se.epoch
        WHERE r.split = ? AND r.overlap = 0 AND {turn} AND {parts} AND r.architecture != 'mpi'
          AND rp.cpu_s IS NOT NULL AND NOT se.warmup_included""", (args.split,)).fetchall()

    links = sorted({row[2] for row in rows})
    names = [FEATURES[0]] + [FEATURES[1].format(l) for l in links] + [FEATURES[2].format(l) for l in links] + [FEATURES[3]]
    x, y, labels = [], [], []
    for arch, k, link, w, b, role, iterations, cpu, wait, own, W, share, wall in rows:
        if w == 1 and arch != "ps":
            continue  # exchanges nothing
        cpu, wait, own = cpu / iterations, wait / iterations, own / iterations
        if share and share < 1 and cpu / (wall / iterations) >= 0.75 * share:
            continue  # at its quota
        compute = constants["cpu_overhead_s"] + constants["cpu_per_sample_s"] * b if role == "worker" else 0.0
        ranks = w + (k if arch == "ps" else 0)
        job = (2 * w * W if arch == "ps" else 2 * (w - 1) * W) / ranks
        waits = (2 * (w - 1) if arch == "ring" else 2) if role == "worker" else 1
        row = [own / 1e6] + [job / 1e6 if l == link else 0.0 for l in links] + \
              [wait * 1e3 if l == link else 0.0 for l in links] + [float(waits)]
        x.append(row)
        y.append((cpu - compute) * 1e3)
        labels.append((arch + (f" k={k}" if arch == "ps" else ""), link, w, role))
    if len(x) <= len(names):
        raise SystemExit(f"cpu_account: {len(x)} rank-epochs below their quota; too few to fit {len(names)} terms")

    # Relative residuals: row i scaled by 1 / y_i.
    n = len(names)
    scaled = [([v / yi for v in xi], 1.0) for xi, yi in zip(x, y) if yi > 0]
    ata = [[sum(r[0][i] * r[0][j] for r in scaled) for j in range(n)] for i in range(n)]
    atb = [sum(r[0][i] * r[1] for r in scaled) for i in range(n)]
    beta, inverse = solve(ata, atb)
    residuals = [sum(b * v for b, v in zip(beta, r[0])) - r[1] for r in scaled]
    variance = sum(e * e for e in residuals) / (len(scaled) - n)

    print(f"{args.db}: {len(scaled)} rank-epochs of {args.split} runs below 3/4 of their quota "
          f"(compute from fit {fit}); relative residual rms {math.sqrt(variance):.1%}")
    for name, value, i in zip(names, beta, range(n)):
        half = 1.96 * math.sqrt(max(inverse[i][i] * variance, 0.0))
        print(f"  {name:32s} {value:9.4f}  [{value - half:.4f}, {value + half:.4f}]")
    groups = defaultdict(lambda: [0.0, 0.0, 0])
    for xi, yi, label in zip(x, y, labels):
        g = groups[label]
        g[0] += sum(b * v for b, v in zip(beta, xi))
        g[1] += yi
        g[2] += 1
    print("fitted / measured CPU beyond compute, per configuration (ms per iteration):")
    for label in sorted(groups):
        fitted, measured, count = groups[label]
        print(f"  {label[0]:8s} {label[1]:8s} w={label[2]} {label[3]:6s} {measured / count:7.2f} "
              f"{fitted / count:7.2f}  {fitted / measured:.2f}")


if __name__ == "__main__":
    main()

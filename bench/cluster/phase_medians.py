#!/usr/bin/env python3
"""Where the complete runs of each database spent their time: the median (and
mean) seconds of each attempt phase (attempt_phases, schemas/database.md), and
the per-run overhead, the attempt's wall time minus the trainer's own
(run_end's total_wall_s).

    phase_medians.py NAME=PATH [NAME=PATH ...]
"""
import sqlite3
import statistics
import sys

PHASES = ["plan_to_launch", "link_shaping", "launch", "mpi_init", "dataset_load", "setup", "warmup_epochs",
          "steady_epochs", "evaluation", "between_epochs", "teardown", "mpirun_exit", "ingest"]


def main(arguments):
    sides = [argument.split("=", 1) for argument in arguments]
    phases = []
    for _, path in sides:
        rows = sqlite3.connect(path).execute(
            "SELECT p.phase, p.seconds FROM attempt_phases p "
            "JOIN runs r ON p.attempt_id = r.complete_attempt_id").fetchall()
        phases.append({phase: [s for f, s in rows if f == phase] for phase in PHASES})
    print(f"{'phase':16}" + "".join(f" {name + ' median':>14}" for name, _ in sides) +
          "".join(f" {name + ' mean':>12}" for name, _ in sides))
    for phase in PHASES:
        medians = [f" {statistics.median(side[phase]):14.3f}" if side[phase] else f" {'-':>14}" for side in phases]
        means = [f" {statistics.mean(side[phase]):12.3f}" if side[phase] else f" {'-':>12}" for side in phases]
        print(f"{phase:16}" + "".join(medians) + "".join(means))
    print()
    print("per-run overhead = attempt wall - trainer's own wall, complete runs:")
    for name, path in sides:
        overheads = [row[0] for row in sqlite3.connect(path).execute(
            "SELECT a.end_unix_s - a.start_unix_s - a.total_wall_s FROM attempts a "
            "JOIN runs r ON a.attempt_id = r.complete_attempt_id")]
        print(f"{name:6} median {statistics.median(overheads):.3f} s of {len(overheads)} runs "
              f"(min {min(overheads):.3f}, max {max(overheads):.3f})")


if __name__ == "__main__":
    main(sys.argv[1:])

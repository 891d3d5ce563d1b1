"""Run the quick benchmark set (`make bench`): each script writes its own results table.

    python benchmarks/run_all.py            # quick set, a few minutes on 2 cores
    python benchmarks/run_all.py --full     # the settings of the committed tables (an hour+)

The committed tables in benchmarks/results_*.md each name the exact command that made them.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

QUICK = [
    ["bench_core.py", "--repeat", "3"],
    ["bench_heuristics.py", "--ops", "20000", "--repeat", "1", "--out", str(HERE / "quick_heuristics.md")],
    ["bench_cp_memory.py", "checkmate", "--runs", "1", "--time-limit", "5"],
    ["bench_cp_memory.py", "buckets", "--time-limit", "10"],
    ["bench_remat.py", "--quick", "--repeats", "1", "--only", "rlg250-90", "fcn8-80",
     "--out", str(HERE / "quick_remat.md")],
    ["reliability.py"],
    ["bench_scale.py", "--sizes", "10000", "--limits", "10000:10", "--repeat", "1",
     "--out", str(HERE / "quick_scale.md")],
    ["bench_sweep.py", "--quick", "--out", str(HERE / "quick_sweep.md")],
]
FULL = [
    ["bench_core.py", "--repeat", "5"],
    ["bench_heuristics.py", "--ops", "100000", "--repeat", "3", "--out", str(HERE / "results_heuristics.md")],
    ["bench_cp_memory.py", "checkmate", "--runs", "3", "--time-limit", "5", "--write"],
    ["bench_cp_memory.py", "rlg", "--time-limit", "60", "--runs", "2", "--sizes", "100,250,500,1000",
     "--write", "--section", "rlg60"],
    ["bench_cp_memory.py", "hlo", "--limits", "60,300", "--write"],
    ["bench_cp_memory.py", "buckets", "--time-limit", "60", "--write"],
    ["bench_overlap.py", "--time-limit", "20", "--repeats", "3", "--distance"],
    ["bench_remat.py", "--repeats", "3"],
    ["reliability.py", "--out", str(HERE / "results_reliability.md")],
    ["bench_scale.py", "--sizes", "1000,10000,100000,1000000", "--limits",
     "1000:10,10000:30,100000:60,100000:300,1000000:600", "--repeat", "3",
     "--signal", "100000:300:60"],
    ["bench_sweep.py", "--repeat", "3", "--out", str(HERE / "results_sweep.md"), "--section", "local"],
]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true")
    args = ap.parse_args()
    failed = 0
    for cmd in (FULL if args.full else QUICK):
        print("==>", " ".join(["python", "benchmarks/" + cmd[0]] + cmd[1:]), flush=True)
        r = subprocess.run([sys.executable, str(HERE / cmd[0])] + cmd[1:])
        failed += r.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# loky vs Dask: wall and CPU time of `dpbench run configs/ihm_vs_adassp.yaml` with 2 workers each
# (backend: dask starts a LocalCluster of 2 single-threaded workers on 127.0.0.1), then checks the CSVs are equal.
# usage: scripts/bench_backends.sh [TRIALS=50]        (docs/library.md, "On a Dask cluster")
set -euo pipefail
trials=${1:-50}
out=$(mktemp -d)
sed 's/^name: ihm_vs_adassp$/name: ihm_vs_adassp_dask/' configs/ihm_vs_adassp.yaml > "$out/dask.yaml"
echo "backend: dask" >> "$out/dask.yaml"
TIMEFORMAT="  %R s wall, %U s user + %S s sys CPU (whole process tree)"
for cfg in configs/ihm_vs_adassp.yaml "$out/dask.yaml"; do
  echo "$(grep -q '^backend: dask' "$cfg" && echo dask || echo loky): $trials trials, 2 workers, load $(cut -d' ' -f1 /proc/loadavg)"
  time dpbench run "$cfg" --trials "$trials" -j 2 --output-dir "$out/results" --fresh --no-progress >/dev/null
done
python - "$out/results" <<'PY'
import sys
from pathlib import Path

import pandas as pd

root = Path(sys.argv[1])
loky, dask = (pd.read_csv(root / name / "trials.csv").drop(columns="seconds")
              for name in ("ihm_vs_adassp", "ihm_vs_adassp_dask"))
pd.testing.assert_frame_equal(loky, dask)
print(f"trials.csv identical ({len(loky)} rows)")
PY
rm -rf "$out"

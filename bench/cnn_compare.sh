#!/usr/bin/env bash
# The CNN comparison of docs/benchmarks.md, back to back in one run: trainscope's CPU backend (`train --model cnn
# --backend cpu`, conv 32,64, dense 128, batch 128, AdamW) and PyTorch on the same model and recipe at its best
# settings (bench/pytorch_cnn.py, NCHW and channels_last), alternating, ROUNDS times each; prints each round's median
# step time and the ratio of trainscope's median to PyTorch's best layout.
#   bench/cnn_compare.sh [THREADS (2)] [ROUNDS (3)]
# Needs build/trainscope (TRAINSCOPE=path to use another build), Debian's dataset-fashion-mnist and python3-torch, run
# with Debian's interpreter (PYTHON, default /usr/bin/python3).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
threads="${1:-2}"
rounds="${2:-3}"
trainscope="${TRAINSCOPE:-$root/build/trainscope}"
[ -x "$trainscope" ] || { echo "cnn_compare: $trainscope not built (run scripts/test)" >&2; exit 1; }
python="${PYTHON:-/usr/bin/python3}"
"$python" -c "import torch" 2>/dev/null || { echo "cnn_compare: PyTorch missing for $python (apt-get install python3-torch)" >&2; exit 1; }
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
ours=() nchw=() nhwc=()
for ((r = 1; r <= rounds; r++)); do
  # 25 steps of batch 128 (the first is left out as warm-up): --limit 3200, one epoch.
  t=$("$trainscope" train --model cnn --backend cpu --threads "$threads" --limit 3200 --epochs 1 2>/dev/null |
      sed -n 's/^step time: cpu \([0-9.]*\) ms.*/\1/p')
  a=$("$python" "$root/bench/pytorch_cnn.py" --threads "$threads" --json |
      "$python" -c 'import json,sys; print(json.load(sys.stdin)["median_ms"])')
  b=$("$python" "$root/bench/pytorch_cnn.py" --threads "$threads" --memory-format channels_last --json |
      "$python" -c 'import json,sys; print(json.load(sys.stdin)["median_ms"])')
  echo "round $r: trainscope cpu ${t} ms/step, pytorch NCHW ${a} ms/step, channels_last ${b} ms/step"
  ours+=("$t"); nchw+=("$a"); nhwc+=("$b")
done
"$python" - "$threads" "${ours[@]}" -- "${nchw[@]}" -- "${nhwc[@]}" <<'PY'
import statistics, sys
args = sys.argv[2:]
a, b = args.index("--"), len(args) - 1 - args[::-1].index("--")
ours, nchw, nhwc = ([float(v) for v in x] for x in (args[:a], args[a + 1:b], args[b + 1:]))
o, best = statistics.median(ours), min(statistics.median(nchw), statistics.median(nhwc))
print(f"median over rounds ({sys.argv[1]} threads): trainscope {o:.2f} ms, pytorch NCHW {statistics.median(nchw):.2f} "
      f"ms, channels_last {statistics.median(nhwc):.2f} ms; ratio trainscope/pytorch's best layout {o / best:.2f} "
      f"(the goal: <= 0.70)")
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/usr/bin/env bash
# The seed-mlp comparison of docs/benchmarks.md, back to back in one run: trainscope's CPU backend
# (`train --preset seed-mlp --backend cpu`) and PyTorch at its best settings (bench/pytorch_seed_mlp.py), alternating,
# ROUNDS times each; prints each round's median step time and the ratio of the medians.
#   bench/seed_mlp_compare.sh [THREADS (2)] [ROUNDS (3)]
# Needs build/trainscope (scripts/test or scripts/run builds it) and python3-torch (apt-get install python3-torch), run
# with Debian's interpreter (PYTHON, default /usr/bin/python3: another python3 on the PATH may not see the package).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
threads="${1:-2}"
rounds="${2:-3}"
trainscope="$root/build/trainscope"
[ -x "$trainscope" ] || { echo "seed_mlp_compare: $trainscope not built (run scripts/test)" >&2; exit 1; }
python="${PYTHON:-/usr/bin/python3}"
"$python" -c "import torch" 2>/dev/null || { echo "seed_mlp_compare: PyTorch missing for $python (apt-get install python3-torch)" >&2; exit 1; }
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
ours=() theirs=()
for ((r = 1; r <= rounds; r++)); do
  t=$("$trainscope" train --preset seed-mlp --backend cpu --threads "$threads" 2>/dev/null |
      sed -n 's/^step time: cpu \([0-9.]*\) ms.*/\1/p')
  p=$("$python" "$root/bench/pytorch_seed_mlp.py" --threads "$threads" --json |
      "$python" -c 'import json,sys; print(json.load(sys.stdin)["median_ms"])')
  echo "round $r: trainscope cpu ${t} ms/step, pytorch ${p} ms/step"
  ours+=("$t"); theirs+=("$p")
done
"$python" - "$threads" "${ours[@]}" -- "${theirs[@]}" <<'PY'
import statistics, sys
args = sys.argv[2:]
cut = args.index("--")
ours, theirs = [float(v) for v in args[:cut]], [float(v) for v in args[cut + 1:]]
o, t = statistics.median(ours), statistics.median(theirs)
print(f"median over rounds ({sys.argv[1]} threads): trainscope {o:.2f} ms, pytorch {t:.2f} ms, "
      f"ratio trainscope/pytorch {o / t:.2f} (best pytorch round {min(theirs):.2f} ms: ratio {o / min(theirs):.2f})")
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

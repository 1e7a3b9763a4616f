#!/usr/bin/env bash
# Continual release benchmark (docs/BENCHMARKS.md, "Continual release"):
# a table split at random into T periods, all 3-way marginals scored, ε = 1
# over the horizon, δ = 1e-9. For t = T/4, T/2, T it scores against the
# cumulative true data:
#   (a) the continual release (tree and tree-reweighted), periods added one
#       by one, each reading only its own rows;
#   (b) re-releasing the whole cumulative table at period t with ε/T (what a
#       pipeline that re-runs synth release every period can afford);
#   (c) one release of all the data at the end with ε (t = T only).
# Usage: run.sh SYNTH DATASET T SEED OUTDIR   (DATASET: a shipped dataset name)
set -euo pipefail
synth=$1 ds=$2 T=$3 seed=$4 out=$5
script_dir=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
cd "$out"
repo=$(cd "$script_dir/../../.." && pwd)
data=$(ls "$repo/datasets/$ds/"*.csv | head -1)
domain=$(ls "$repo/datasets/$ds/"*-domain.json | head -1)
# Random split into T periods (public seed: the split is the benchmark's, not a release's).
python3 - "$data" "$T" "$seed" <<'PY'
import random, sys
path, T, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lines = open(path).read().splitlines()
random.seed(seed)
parts = [[] for _ in range(T)]
for r in lines[1:]:
    parts[random.randrange(T)].append(r)
for i, p in enumerate(parts):
    open(f"p{i:04d}.csv", "w").write(lines[0] + "\n" + "\n".join(p) + "\n")
for t in (T // 4, T // 2, T):
    with open(f"cum{t:04d}.csv", "w") as f:
        f.write(lines[0] + "\n")
        for p in parts[:t]:
            if p:
                f.write("\n".join(p) + "\n")
PY
score() { # synthetic file, cumulative data → "max avg-L1"
  rm -rf ev
  "$synth" eval --data "$2" --domain "$domain" --marginals 3 --synthetic "$1" --out ev -q >/dev/null
  python3 -c 'import json; d=json.load(open("ev/report.json")); m=d["marginals"]; print("max=%.4g l1=%.4g" % (d["errors"]["synthetic"]["max"], sum(x["l1"] for x in m)/len(m)))'
}
epsT=$(python3 -c "print(1/$T)")
for mech in tree tree-reweighted; do
  rm -rf "st-$mech"
  "$synth" continual init --state "st-$mech" --domain "$domain" --marginals 3 --measure 2 --periods "$T" --epsilon 1 --mechanism "$mech" >/dev/null
  for ((i = 0; i < T; i++)); do
    s=$(date +%s.%N)
    "$synth" continual add --state "st-$mech" --period "p$i" --data "$(printf 'p%04d.csv' "$i")" >/dev/null
    e=$(date +%s.%N)
    echo "add $mech $i $(python3 -c "print(round($e-$s,3))")" >> times.txt
    t=$((i + 1))
    if [ $t -eq $((T / 4)) ] || [ $t -eq $((T / 2)) ] || [ $t -eq $T ]; then
      s=$(date +%s.%N)
      "$synth" continual add --state "st-$mech" --period "p$i" --out "rel-$mech-$t" --seed "$seed" --force >/dev/null
      e=$(date +%s.%N)
      echo "a $mech t=$t $(score "rel-$mech-$t/synthetic.parquet" "$(printf 'cum%04d.csv' $t)") release_s=$(python3 -c "print(round($e-$s,2))")" >> results.txt
    fi
  done
done
for t in $((T / 4)) $((T / 2)) $T; do
  "$synth" release --data "$(printf 'cum%04d.csv' $t)" --domain "$domain" --marginals 3 --epsilon "$epsT" --seed "$seed" --out "rr-$t" --force -q
  echo "b rerelease-eps/T t=$t $(score "rr-$t/synthetic.parquet" "$(printf 'cum%04d.csv' $t)")" >> results.txt
done
"$synth" release --data "$(printf 'cum%04d.csv' $T)" --domain "$domain" --marginals 3 --epsilon 1 --seed "$seed" --out "once" --force -q
echo "c once t=$T $(score once/synthetic.parquet "$(printf 'cum%04d.csv' $T)")" >> results.txt
cat results.txt

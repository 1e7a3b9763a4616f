#!/bin/sh
# Runs private-pgm's AIM or MST on a protocol of synth bench and scores the
# synthetic table with synth eval on the protocol's workload. Appends one row
# to OUT.csv: protocol,method,epsilon,run,max_error,mean_marginal_l1,seconds,peak_rss_mib
#
#   PGM=/path/to/private-pgm SYNTH=/path/to/synth docs/bench/suite/pgm.sh aim cps1988 0.5 1 OUT.csv
#
# PGM is a checkout of github.com/ryan112358/private-pgm at 514dea3 (2024-11-09,
# the last commit before its JAX rewrite); it runs on Debian's python3 with
# python3-numpy, python3-scipy, python3-pandas and python3-networkx. The
# mechanisms run with their own defaults; only the workload filter max_cells
# is lifted so that AIM sees every marginal of the protocol's workload (its
# default drops marginals over 10,000 cells). private-pgm draws its noise from
# numpy's global generator, unseeded: "run" only numbers repetitions. A run
# longer than TIMEOUT seconds (default 3600) is stopped and its row has NaN
# errors.
#
# AIM imports two libraries Debian does not package: hdmm, for Identity(n),
# the identity measurement matrix, and autodp, whose Gaussian calibrator only
# the (ε, δ) mechanisms call (AIM and MST calibrate with zCDP). The shims
# written below give Identity(n) as scipy.sparse.eye(n), the matrix
# private-pgm itself uses for an identity measurement given as None, and an
# autodp calibrator that refuses to run.
set -eu
method=$1 protocol=$2 eps=$3 run=$4 out=$5
: "${PGM:?set PGM to a private-pgm checkout}" "${SYNTH:?set SYNTH to the synth binary}"
work=${WORK:-/tmp/pgm-suite}
in=$work/in/$protocol
case $protocol in
*-2way) degree=2 ;;
*) degree=3 ;;
esac
if [ ! -f "$in/domain.json" ]; then
	go run ./bench/internal/pgmprep -protocol "$protocol" -out "$in"
fi
shims=$work/shims
if [ ! -f "$shims/hdmm/matrix.py" ]; then
	mkdir -p "$shims/hdmm" "$shims/autodp"
	: >"$shims/hdmm/__init__.py"
	printf 'from scipy import sparse\n\ndef Identity(n):\n    return sparse.eye(n)\n' >"$shims/hdmm/matrix.py"
	: >"$shims/autodp/__init__.py"
	printf 'def ana_gaussian_mech(*args, **kwargs):\n    raise NotImplementedError("autodp is not installed")\n\ngaussian_mech = ana_gaussian_mech\n' >"$shims/autodp/privacy_calibrator.py"
fi
res=$work/out/$protocol-$method-$eps-$run
mkdir -p "$res"
start=$(date +%s.%N)
status=0
(cd "$PGM/mechanisms" && PYTHONPATH="$PGM/src:$PGM:$shims" OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
	timeout "${TIMEOUT:-3600}" /usr/bin/time -f %M -o "$res/rss" /usr/bin/python3 "$method.py" --dataset "$in/data.csv" --domain "$in/domain.json" \
	--epsilon "$eps" --delta 1e-9 --degree "$degree" --max_cells 1000000000000 \
	--save "$res/synthetic.csv" >"$res/log" 2>&1) || status=$?
end=$(date +%s.%N)
if [ "$status" != 0 ]; then
	echo "$protocol,$method,$eps,$run,NaN,NaN,$(echo "$end - $start" | bc),NaN" >>"$out"
	echo "$method on $protocol at ε = $eps: exit status $status (log: $res/log)" >&2
	exit 0
fi
"$SYNTH" eval -q --data "$in/data.csv" --domain "$in/domain.json" --marginals "$degree" \
	--synthetic "$res/synthetic.csv" --out "$res/eval" --force
/usr/bin/python3 - "$res" "$protocol" "$method" "$eps" "$run" "$start" "$end" >>"$out" <<'PY'
import json, sys
res, protocol, method, eps, run, start, end = sys.argv[1:]
r = json.load(open(res + "/eval/report.json"))
l1 = [m["l1"] for m in r["marginals"]]
rss = int(open(res + "/rss").read().split()[-1]) / 1024
print(f"{protocol},{method},{eps},{run},{r['errors']['synthetic']['max']:.6g},{sum(l1)/len(l1):.6g},"
      f"{float(end)-float(start):.1f},{rss:.0f}")
PY

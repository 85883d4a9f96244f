#!/usr/bin/env bash
# NUFFT and non-Cartesian CG-SENSE against their peers in one call on one machine (issue 49; docs/benchmarks.md):
#  1. type 1 and type 2 on a 256² grid, 10⁶ points uniform over the band, tolerance 1e-6: cliper-bench nufft on the
#     device against FINUFFT (CPU, every core) and, where importable, SigPy on CuPy and cuFINUFFT (GPU), same
#     points (scripts/bench/peer_nufft.py writes them);
#  2. CG-SENSE with a trajectory, 8 coils × 256², golden-angle radial 512 × 201 (2× readout oversampling, half the
#     spokes of full sampling), BART's analytic phantom k-space and maps: bart pics -t -l2 -r 0.01 -i 30 -w 1 on the
#     machine's cores against cliper-bench recon-traj on the device, and the NRMSE between the images;
#  3. the same data with ℓ1-wavelet (pics -l1 -e) and TV (pics -R T) on normalised maps, and the trajectory's
#     Pipe–Menon density compensation (host) timed once.
#   usage: nufft-vs-peers.sh BART CLIPER_BENCH WORKDIR
set -euo pipefail
BART=$(realpath "${1:-$(command -v bart)}")
BENCH=$(realpath "${2:-target/release/cliper-bench}")
W=${3:-/tmp/nufft-vs-peers}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$W"
export PYTHONPATH=$HERE${PYTHONPATH:+:$PYTHONPATH}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
echo "$(nproc) cores; bart $($BART version); OMP_NUM_THREADS=$OMP_NUM_THREADS"
# ONLY_RECON=1 skips part 1 (the transforms and their Python peers).
if [ -z "${ONLY_RECON:-}" ]; then
    python3 "$HERE/peer_nufft.py" "$W/c64" --threads "$(nproc)"
    "$BENCH" nufft "$W/c64/points.npy" --dtype c64 --reps 10 --profile
    python3 "$HERE/peer_nufft.py" "$W/c128" --threads "$(nproc)" --double
    "$BENCH" nufft "$W/c128/points.npy" --dtype c128 --reps 10
fi
cd "$W"
$BART traj -x 512 -y 201 -r -G t >/dev/null
$BART scale 0.5 t traj >/dev/null
$BART phantom -k -s 8 -t traj ksp >/dev/null
$BART phantom -S 8 -x 256 sens >/dev/null
total=$($BART pics -t traj -l2 -r 0.01 -i 30 -w 1 ksp sens bart_cg 2>&1 | sed -n 's/.*Total Time: //p')
echo "bart pics -t traj -l2 -r 0.01 -i 30 -w 1, 8 coils × 256², 512 × 201 radial: ${total} s"
"$BENCH" recon-traj ksp.cfl --traj traj.cfl --maps sens.cfl --iters 30 --lambda 0.01 --reps 5 --out ours_cg.cfl
python3 - <<'PY'
import numpy as np
from cfl import rd
a, b = rd("bart_cg")[0].squeeze(), rd("ours_cg")[0].squeeze()
print(f"NRMSE ours against bart pics -t: {np.linalg.norm(a - b) / np.linalg.norm(a):.2e}")
PY
# 3. ℓ1-wavelet (FISTA, step 0.95 over AᴴA's largest eigenvalue: pics -e) and TV (ADMM) with the trajectory, on maps
#    of unit root-sum-of-squares (BART's analytic maps reach 1e5, where any FISTA step diverges), same data, -w 1.
$BART rss 8 sens rss >/dev/null
$BART invert rss irss >/dev/null
$BART fmac sens irss sens_n >/dev/null
total=$($BART pics -t traj -l1 -r 0.005 -i 30 -e -w 1 ksp sens_n bart_l1 2>&1 | sed -n 's/.*Total Time: //p')
echo "bart pics -t traj -l1 -r 0.005 -i 30 -e -w 1, 8 coils × 256², 512 × 201 radial: ${total} s"
"$BENCH" recon-traj ksp.cfl --traj traj.cfl --maps sens_n.cfl --penalty l1 --iters 30 --lambda 0.005 --reps 5 --dcf --out ours_l1.cfl
total=$($BART pics -t traj -R T:7:0:0.01 -i 50 -w 1 ksp sens_n bart_tv 2>&1 | sed -n 's/.*Total Time: //p')
echo "bart pics -t traj -R T:7:0:0.01 -i 50 -w 1, same data: ${total} s"
"$BENCH" recon-traj ksp.cfl --traj traj.cfl --maps sens_n.cfl --penalty tv --iters 50 --lambda 0.01 --reps 5 --out ours_tv.cfl
python3 - <<'PY'
import numpy as np
from cfl import rd
for name in ("l1", "tv"):
    a, b = rd(f"bart_{name}")[0].squeeze(), rd(f"ours_{name}")[0].squeeze()
    print(f"NRMSE ours against bart pics -t ({name}): {np.linalg.norm(a - b) / np.linalg.norm(a):.2e}")
PY

#!/usr/bin/env bash
# NUFFT and non-Cartesian CG-SENSE against their peers in one call on one machine (issue 49; docs/benchmarks.md):
#  1. type 1 and type 2 on a 256² grid, 10⁶ points uniform over the band, tolerance 1e-6: cliper-bench nufft on the
#     device against FINUFFT (CPU, every core) and, where importable, SigPy on CuPy and cuFINUFFT (GPU), same
#     points (scripts/bench/peer_nufft.py writes them);
#  2. CG-SENSE with a trajectory, 8 coils × 256², golden-angle radial 512 × 201 (2× readout oversampling, half the
#     spokes of full sampling), BART's analytic phantom k-space and maps: bart pics -t -l2 -r 0.01 -i 30 -w 1 on the
#     machine's cores against cliper-bench recon-traj on the device, and the NRMSE between the images.
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
python3 "$HERE/peer_nufft.py" "$W/c64" --threads "$(nproc)"
"$BENCH" nufft "$W/c64/points.npy" --dtype c64 --reps 10 --profile
python3 "$HERE/peer_nufft.py" "$W/c128" --threads "$(nproc)" --double
"$BENCH" nufft "$W/c128/points.npy" --dtype c128 --reps 10
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

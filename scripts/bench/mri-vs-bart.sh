#!/usr/bin/env bash
# Iterative MRI reconstructions, cliper on the device against `bart pics` on the CPU, same data in the same call
# (issue 30; docs/mri.md). Makes BART's 8-coil phantom at 256² and a 32-coil 320² case (the 8-coil phantom's
# k-space and ESPIRiT maps four times over, each copy with its own phase and weight 1/2, so Σ|s|² is kept), a
# Poisson-disc mask (R ≈ 4, 24² centre), times `bart ecalib`, then for CG-SENSE, ℓ1-wavelet and TV: BART's own
# "Total Time" and cliper-bench recon's median on the device, and the NRMSE between the two images.
#   usage: mri-vs-bart.sh BART CLIPER_BENCH WORKDIR
set -euo pipefail
BART=$(realpath "${1:-$(command -v bart)}")
BENCH=$(realpath "${2:-target/release/cliper-bench}")
W=${3:-/tmp/mri-vs-bart}
mkdir -p "$W"
# The CFL helpers (cfl.py) are beside this script.
export PYTHONPATH=$(cd "$(dirname "$0")" && pwd)${PYTHONPATH:+:$PYTHONPATH}
cd "$W"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
echo "bart $($BART version), OMP_NUM_THREADS=$OMP_NUM_THREADS, $(nproc) cores"
nrmse() {
    python3 - "$1" "$2" <<'PY'
import sys, numpy as np
from cfl import rd as read
def rd(n):
    return read(n)[0].squeeze()
a, b = rd(sys.argv[1]), rd(sys.argv[2])
print(f"NRMSE {np.linalg.norm(a - b) / np.linalg.norm(a):.2e}")
PY
}
for n in 256 320; do
    $BART phantom -k -s 8 -x $n k8_$n
    $BART poisson -Y $n -Z $n -y 2.1 -z 2.1 -C 24 -s 1234 p_$n >/dev/null
    $BART transpose 0 2 p_$n m_$n
    $BART fmac k8_$n m_$n u8_$n
    start=$(date +%s.%N)
    $BART ecalib -m1 u8_$n s8_$n >/dev/null
    echo "bart ecalib -m1, 8 coils × $n²: $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }') s"
done
# 32 coils × 320²: four phased copies of the 8-coil data and maps.
python3 - <<'PY'
import numpy as np
from cfl import rd, wr
for name in ("u8_320", "s8_320"):
    a, dims = rd(name)
    copies = [a * np.exp(1j * np.pi * j / 4) / 2 for j in range(4)]
    dims[3] = 32
    wr(name.replace("8", "32", 1), np.concatenate(copies, axis=3), dims)
PY
for case in 8_256 32_320; do
    u=u$case
    s=s$case
    for spec in "cg|-l2 -r 0.01 -i 30|0.01|30" "l1|-l1 -r 5 -i 30|5|30" "tv|-R T:7:0:10 -i 50|10|50"; do
        IFS="|" read -r method flags lambda iters <<<"$spec"
        total=$($BART pics $flags -w 1 $u $s bart_${method}_$case 2>&1 | sed -n 's/.*Total Time: //p')
        echo "bart pics $flags -w 1, ${case/_/ coils × }²: ${total} s ($iters iterations)"
        $BENCH recon $u.cfl --maps $s.cfl --method $method --lambda $lambda --iters $iters --reps 5 \
            --out ours_${method}_$case.cfl 2>&1 | grep '^recon'
        nrmse bart_${method}_$case ours_${method}_$case
    done
done

#!/usr/bin/env bash
# Coil maps, cliper on the device against `bart ecalib -m1` on the CPU, same data in the same call (issue 30;
# docs/mri.md). Cases: BART's 8-coil phantom at 256² and a 32-coil 320² case whose coils are independent (the
# 8-coil phantom's coil images four times over, each copy times its own smooth complex profile, back to k-space),
# each undersampled by a Poisson-disc mask (R ≈ 4, 24² centre). Prints BART's wall time (3 runs), cliper-bench's
# median of in-process launches for ESPIRiT and Walsh, `cliper ecalib`'s whole-command wall time, and the maps'
# NRMSE against BART's after one global sign.
#   usage: ecalib-vs-bart.sh BART CLIPER_BENCH CLIPER WORKDIR
set -euo pipefail
BART=$(realpath "${1:-$(command -v bart)}")
BENCH=$(realpath "${2:-target/release/cliper-bench}")
CLIPER=$(realpath "${3:-target/release/cliper}")
W=${4:-/tmp/ecalib-vs-bart}
mkdir -p "$W"
# The CFL helpers (cfl.py) are beside this script.
export PYTHONPATH=$(cd "$(dirname "$0")" && pwd)${PYTHONPATH:+:$PYTHONPATH}
cd "$W"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
echo "bart $($BART version), OMP_NUM_THREADS=$OMP_NUM_THREADS, $(nproc) cores"
seconds() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }'; }
$BART phantom -k -s 8 -x 256 k8_256
$BART phantom -s 8 -x 320 i8_320
python3 - <<'PY'
import numpy as np
from cfl import rd, wr
img, dims = rd("i8_320")
n = dims[0]
img = img.reshape(n, n, 1, 8, order="F")
x, y = np.meshgrid(np.linspace(-1, 1, n), np.linspace(-1, 1, n), indexing="ij")
coils = []
for j in range(4):
    t = np.pi * j / 4
    u, v = x * np.cos(t) + y * np.sin(t), x * np.sin(t) - y * np.cos(t)
    profile = (0.6 + 0.4 * np.cos(np.pi * u / 2)) * np.exp(0.5j * np.pi * v)
    coils.append(img * profile[:, :, None, None])
img32 = np.concatenate(coils, axis=3)
k = np.fft.fftshift(np.fft.fft2(np.fft.ifftshift(img32, axes=(0, 1)), axes=(0, 1)), axes=(0, 1))
dims[3] = 32
wr("k32_320", k, dims)
PY
for case in 8_256 32_320; do
    n=${case#*_}
    $BART poisson -Y $n -Z $n -y 2.1 -z 2.1 -C 24 -s 1234 p_$n >/dev/null
    $BART transpose 0 2 p_$n m_$n
    $BART fmac k$case m_$n u$case
    for r in 1 2 3; do
        start=$(date +%s.%N)
        $BART ecalib -m1 u$case s$case >/dev/null
        echo "bart ecalib -m1, ${case/_/ coils × }², run $r: $(seconds "$start") s"
    done
    $BENCH recon u$case.cfl --method espirit --reps 20 --out ours_$case.cfl 2>&1 | grep '^maps'
    $BENCH recon u$case.cfl --method walsh --reps 20 2>&1 | grep '^maps'
    for r in 1 2; do
        start=$(date +%s.%N)
        $CLIPER ecalib u$case.cfl cli_$case.cfl >/dev/null
        echo "cliper ecalib (whole command, device start-up and program cache included), run $r: $(seconds "$start") s"
    done
    python3 - s$case ours_$case cli_$case <<'PY'
import sys, numpy as np
from cfl import rd as read
def rd(n):
    return read(n)[0].squeeze()
bart = rd(sys.argv[1])
for name in sys.argv[2:]:
    a = rd(name)
    if a.shape != bart.shape:
        a = np.moveaxis(a, 0, -1)
    s = np.sign(np.real(np.vdot(a, bart))) or 1.0
    print(f"{name} against bart ecalib: NRMSE {np.linalg.norm(s * a - bart) / np.linalg.norm(bart):.2e}")
PY
done

#!/usr/bin/env bash
# Issue 49's last reconstructions against BART on one machine, wall time of the whole command on both sides (file
# reading and writing included; BART on all the machine's cores, cliper on CLIPER_DEVICE):
#   e3d-64x64x48x8        3-D ESPIRiT: bart ecalib -m1 against cliper ecalib (4-coil… 8-coil phantom, 64 × 64 × 48)
#   frames-cart-8x256-10  10 Cartesian frames, 8 coils, 256², a Poisson pattern each: pics -l2 -r 0.01 -i 30 and
#                         -l1 -r 0.005 -i 30 against cliper recon --method cg-sense / l1-wavelet (one problem)
#   frames-rad-8x256-10   10 golden-angle radial frames (bart traj -t 10), 8 coils, 256²: pics -t -l2 -r 0.01 -i 30
#                         against cliper recon --traj (default kernel and --kernel bart)
# Each case prints `case tool seconds… nrmse-to-bart` lines; cliper runs three times (the first builds its
# kernels), BART twice. Usage: mri3-vs-bart.sh BART_BIN CLIPER_BIN WORK_DIR
set -euo pipefail
BART=$1
CLIPER=$2
WORK=$3
mkdir -p "$WORK"
cd "$WORK"

seconds() {
    local start end
    start=$EPOCHREALTIME
    "$@" > /dev/null 2>&1
    end=$EPOCHREALTIME
    python3 -c "print(f'{$end - $start:.3f}')"
}

times() {
    local n=$1
    shift
    local out=""
    for _ in $(seq "$n"); do out="$out $(seconds "$@")"; done
    echo "$out"
}

# NRMSE of OURS against BART's image, after the sign that fits best (pics's sign flips on axes ≡ 2 mod 4).
nrmse() {
    local plus minus
    plus=$($BART nrmse "$2" "$1" 2> /dev/null || echo nan)
    $BART scale -- -1 "$1" negated > /dev/null 2>&1
    minus=$($BART nrmse "$2" negated 2> /dev/null || echo nan)
    python3 -c "import math; v=[float(x) for x in ('$plus','$minus') if x!='nan']; print(min(v) if v else 'nan')"
}

echo "# $(date -u +%FT%TZ) $(nproc) cores; CLIPER_DEVICE=${CLIPER_DEVICE:-default}"

# ---- e3d-64x64x48x8
$BART phantom -3 -x 64 -k -s 8 k64 > /dev/null
$BART resize -c 2 48 k64 k3d > /dev/null
echo "e3d-64x64x48x8 bart $(times 2 $BART ecalib -m1 k3d bart_maps)"
echo "e3d-64x64x48x8 cliper $(times 3 $CLIPER ecalib k3d ours_maps.cfl) nrmse $(nrmse ours_maps bart_maps)"
$CLIPER ecalib k3d ours_maps.cfl | head -1

# ---- frames-cart-8x256-10
$BART phantom -x 256 -k -s 8 full > /dev/null
$BART ecalib -m1 full maps > /dev/null
frames=()
for f in $(seq 0 9); do
    $BART poisson -Y 256 -Z 256 -y 2 -z 2 -C 24 -s $((f + 1)) p$f > /dev/null
    $BART transpose 0 2 p$f q$f > /dev/null
    $BART transpose 0 1 q$f m$f > /dev/null
    $BART fmac full m$f k$f > /dev/null
    frames+=(k$f)
done
$BART join 10 "${frames[@]}" kc > /dev/null
cp maps.cfl kc_sens.cfl
cp maps.hdr kc_sens.hdr
echo "frames-cart-8x256-10 bart-l2 $(times 2 $BART pics -l2 -r 0.01 -i 30 kc maps bart_l2)"
echo "frames-cart-8x256-10 cliper-l2 $(times 3 $CLIPER recon kc ours_l2.cfl --method cg-sense --lambda 0.01 --iters 30) nrmse $(nrmse ours_l2 bart_l2)"
echo "frames-cart-8x256-10 bart-l1 $(times 2 $BART pics -l1 -r 0.005 -i 30 kc maps bart_l1)"
echo "frames-cart-8x256-10 cliper-l1 $(times 3 $CLIPER recon kc ours_l1.cfl --method l1-wavelet --lambda 0.005 --iters 30) nrmse $(nrmse ours_l1 bart_l1)"

# ---- frames-rad-8x256-10
$BART traj -x 512 -y 55 -r -G -t 10 t512 > /dev/null
$BART scale 0.5 t512 traj > /dev/null
$BART phantom -k -s 8 -t traj kr > /dev/null
$BART phantom -S 8 -x 256 sens > /dev/null
$BART rss 8 sens rss > /dev/null
$BART invert rss irss > /dev/null
$BART fmac sens irss sens_n > /dev/null
echo "frames-rad-8x256-10 bart-l2 $(times 2 $BART pics -t traj -l2 -r 0.01 -i 30 kr sens_n bart_r)"
for kernel in es bart; do
    echo "frames-rad-8x256-10 cliper-l2-$kernel $(times 3 $CLIPER recon kr ours_r_$kernel.cfl --traj traj --maps sens_n --lambda 0.01 --iters 30 --kernel $kernel) nrmse $(nrmse ours_r_$kernel bart_r)"
done

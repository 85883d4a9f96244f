#!/usr/bin/env bash
# `cliper info` against nibabel on a 256 MiB int16 NIfTI (issue 44, item 6): peak resident memory and wall time,
# both read by GNU time (`apt-get install time`) in the same call. nibabel's side loads the image as its users do
# (np.asanyarray(img.dataobj): a memory map of the file) and computes what `info` prints: min, max, mean.
#   usage: info-memory.sh CLIPER [CLIPER_BEFORE] [WORKDIR]
set -euo pipefail
CLIPER=$(realpath "$1")
BEFORE=${2:+$(realpath "$2")}
W=${3:-/tmp/info-memory}
mkdir -p "$W"
cd "$W"
if [ ! -f ct_int16.nii ]; then
    python3 - <<'PY'
import nibabel as nib, numpy as np
# 512 × 512 × 512 int16 (256 MiB of voxels), CT-like values: an ellipsoid of soft tissue in air, noise.
rng = np.random.default_rng(44)
k, j, i = np.ogrid[:512, :512, :512]
body = ((i - 256) / 200.0) ** 2 + ((j - 256) / 150.0) ** 2 + ((k - 256) / 240.0) ** 2 < 1
a = np.where(body, 40, -1000).astype(np.int16) + rng.integers(-20, 21, size=(512, 512, 512), dtype=np.int16)
img = nib.Nifti1Image(a, np.diag([0.7, 0.7, 1.0, 1.0]))
img.header.set_data_dtype(np.int16)
img.header.set_slope_inter(1, 0)  # stored values are the values: no scaling
nib.save(img, "ct_int16.nii")
PY
fi
cat > nibabel_info.py <<'PY'
import sys, nibabel as nib, numpy as np
img = nib.load(sys.argv[1])
a = np.asanyarray(img.dataobj)
print(a.shape, a.dtype, "min", a.min(), "max", a.max(), "mean", a.mean(dtype=np.float64))
PY
ls -l ct_int16.nii
measure() {  # label, command…
    local label=$1; shift
    cat ct_int16.nii > /dev/null  # the file in the page cache for every run alike
    /usr/bin/time -f "$label: %e s, peak RSS %M KB" "$@" 2>&1 | grep -v '^  geometry\|^  affine'
}
for run in 1 2; do
    echo "# run $run"
    measure "nibabel $(python3 -c 'import nibabel; print(nibabel.__version__)')" python3 nibabel_info.py ct_int16.nii
    [ -n "$BEFORE" ] && measure "cliper before" "$BEFORE" info ct_int16.nii
    measure "cliper" "$CLIPER" info ct_int16.nii
done

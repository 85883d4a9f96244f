"""Issue 48's speed cases — measurements, region properties, thresholds, reductions — through cliper's Python
package beside the reference on the same machine, in one run (line format of the other peer scripts: `peer op
size ms GFLOP/s GB/s`; case ids are the `op size` pairs):

    python3 scripts/bench/measurements.py gpu    # cliper on the GPU beside cuCIM / CuPy (CUDA), same card
    python3 scripts/bench/measurements.py cpu    # cliper on PoCL beside scipy / scikit-image on the same cores

Inputs: label images of blocks (`blocks(shape, labels)`: a grid of equal boxes, label numbers shuffled so that
neighbouring boxes are not neighbouring numbers), intensities uniform in [0, 1), float32. The sizes are the
issue's: 8192² with 10^5 labels, 512³ with 10^4 labels (the CPU run uses the same images; scipy and scikit-image
take seconds on them, which is what the 10× target is about). Each time is the median of a few runs after a
warm-up; results are checked against the peer's once, so a fast wrong answer does not print as a number.
"""
import sys
import time

import numpy as np

import cliper
import cliper.filters
import cliper.measure
from cliper import ndimage as cnd

mode = sys.argv[1] if len(sys.argv) > 1 else "cpu"
gpu = mode == "gpu"

if gpu:
    import cupy as cp
    import cupyx.scipy.ndimage as xnd
    from cucim.skimage import filters as xfilters
    from cucim.skimage import measure as xmeasure

    peer = "cucim"

    def to_peer(a):
        return cp.asarray(a)

    def sync():
        cp.cuda.Device().synchronize()
else:
    import scipy.ndimage as xnd
    from skimage import filters as xfilters
    from skimage import measure as xmeasure

    peer = "skimage"

    def to_peer(a):
        return a

    def sync():
        pass


def blocks(shape, count, seed):
    """A label image of `shape` cut into a grid of about `count` equal boxes, numbered 1.. in shuffled order."""
    per_axis = int(round(count ** (1.0 / len(shape))))
    edges = [np.minimum(np.arange(n) * per_axis // n, per_axis - 1) for n in shape]
    flat = np.zeros(shape, dtype=np.int64)
    for axis, e in enumerate(edges):
        index = [None] * len(shape)
        index[axis] = slice(None)
        flat = flat * per_axis + e[tuple(index)]
    order = np.random.default_rng(seed).permutation(per_axis ** len(shape)) + 1
    return order[flat].astype(np.int32), per_axis ** len(shape)


def median_ms(fn, reps=3, budget=60.0):
    fn()
    sync()
    times = []
    t0 = time.perf_counter()
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t)
        if time.perf_counter() - t0 > budget:
            break
    times.sort()
    return times[len(times) // 2] * 1e3


def line(who, op, size, ms, bytes_=0.0):
    print(f"{who:9s} {op:28s} {size:14s} {ms:10.4f} ms {0.0:10.1f} GFLOP/s {bytes_ / ms / 1e6:9.1f} GB/s", flush=True)


def host(x):
    if isinstance(x, dict):
        return {k: host(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return np.asarray([host(v) for v in x])
    if hasattr(x, "get"):
        return np.asarray(x.get())
    return np.asarray(x)


def case(op, size, ours, theirs, bytes_=0.0, rtol=1e-4, reps=3):
    """Times `ours` (cliper) and `theirs` (the peer) and prints both, after checking they agree to `rtol`."""
    try:
        mine, ref = host(ours()), host(theirs())
        if isinstance(mine, dict):
            for key in ref:
                np.testing.assert_allclose(mine[key], ref[key], rtol=rtol, atol=1e-6, err_msg=key)
        else:
            np.testing.assert_allclose(mine, ref, rtol=rtol, atol=1e-6)
    except Exception as ex:  # noqa: BLE001 - report and go on
        print(f"{op} {size}: no timing, {type(ex).__name__}: {str(ex).splitlines()[0] if str(ex) else ''}", flush=True)
        return
    line("cliper-py", op, size, median_ms(ours, reps), bytes_)
    line(peer, op, size, median_ms(theirs, reps), bytes_)


device = next(d for d in cliper.devices() if d["id"] == cliper.default_device())
print("device:", device["name"], "|", device["platform"], "| peer", peer)

rng = np.random.default_rng(48)
n = 8192
labels_np, count = blocks((n, n), 100_000, 1)
image_np = rng.random((n, n), dtype=np.float32)
size = f"{n}x{n}/{count}"
labels, image = cliper.asarray(labels_np.astype(np.float32)), cliper.asarray(image_np)
plabels, pimage = to_peer(labels_np), to_peer(image_np)
index = np.arange(1, count + 1)
pindex = to_peer(index)
nbytes = image_np.nbytes * 2

case("sum_labels", size, lambda: cnd.sum_labels(image, labels, index),
     lambda: xnd.sum_labels(pimage, plabels, pindex), nbytes)
case("mean", size, lambda: cnd.mean(image, labels, index), lambda: xnd.mean(pimage, plabels, pindex), nbytes)
case("variance", size, lambda: cnd.variance(image, labels, index),
     lambda: xnd.variance(pimage, plabels, pindex), nbytes, rtol=1e-3)
case("maximum", size, lambda: cnd.maximum(image, labels, index), lambda: xnd.maximum(pimage, plabels, pindex), nbytes)
case("center_of_mass", size, lambda: cnd.center_of_mass(image, labels, index),
     lambda: xnd.center_of_mass(pimage, plabels, pindex), nbytes)

props = ("label", "area", "bbox", "centroid", "intensity_mean")
case("regionprops_table", size,
     lambda: cliper.measure.regionprops_table(labels_np, image_np, properties=props),
     lambda: xmeasure.regionprops_table(plabels, pimage, properties=props), nbytes, reps=2)

case("threshold_otsu", f"{n}x{n}", lambda: cliper.filters.threshold_otsu(image),
     lambda: xfilters.threshold_otsu(pimage), image_np.nbytes, rtol=1e-3)
case("threshold_li", f"{n}x{n}", lambda: cliper.filters.threshold_li(image),
     lambda: xfilters.threshold_li(pimage), image_np.nbytes, rtol=1e-3)
del labels, image, plabels, pimage

v = 512
labels3_np, count3 = blocks((v, v, v), 10_000, 2)
image3_np = rng.random((v, v, v), dtype=np.float32)
size3 = f"{v}^3/{count3}"
labels3, image3 = cliper.asarray(labels3_np.astype(np.float32)), cliper.asarray(image3_np)
plabels3, pimage3 = to_peer(labels3_np), to_peer(image3_np)
index3 = np.arange(1, count3 + 1)
case("center_of_mass", size3, lambda: cnd.center_of_mass(image3, labels3, index3),
     lambda: xnd.center_of_mass(pimage3, plabels3, to_peer(index3)), image3_np.nbytes * 2)
if gpu:  # CuPy has no find_objects: cuCIM's bounding boxes are its equivalent
    case("find_objects", size3,
         lambda: [[s.start for s in b] + [s.stop for s in b] for b in cnd.find_objects(labels3)],
         lambda: np.stack([host(c) for c in xmeasure.regionprops_table(plabels3, properties=("bbox",)).values()], 1),
         labels3_np.nbytes)
else:
    case("find_objects", size3, lambda: [[s.start for s in b] + [s.stop for s in b] for b in cnd.find_objects(labels3)],
         lambda: [[s.start for s in b] + [s.stop for s in b] for b in xnd.find_objects(plabels3)], labels3_np.nbytes)

# Reductions along an axis: memory-bound, so GB/s read is what to compare with the copy bandwidth.
for axis in (0, 2):
    case(f"mean axis {axis}", f"{v}^3", lambda: image3.mean(axis=axis), lambda: pimage3.mean(axis=axis),
         image3_np.nbytes, rtol=1e-4, reps=5)

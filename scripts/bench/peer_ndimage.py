"""The ndimage operations of issue 25 in CuPy (GPU) or scipy/numpy (CPU), on the suite's case sizes.

    python3 scripts/bench/peer_ndimage.py gpu     # cupyx.scipy.ndimage on 8192² images and 512³ volumes
    python3 scripts/bench/peer_ndimage.py cpu     # scipy.ndimage on the `--quick` sizes (2048², 128³)

Prints one line per case in peer_torch.py's format (`peer op size ms GFLOP/s GB/s`), which
`cliper-bench report` matches to the suite's cases (bench/src/peers.rs). GPU times: CUDA events around
back-to-back calls after a warm-up (per call); CPU: median wall time of a few runs. A case that fails (memory,
a missing function) prints its error and the others go on.
"""
import sys
import time

import numpy as np

mode = sys.argv[1] if len(sys.argv) > 1 else "cpu"
gpu = mode == "gpu"
if gpu:
    import cupy as xp
    import cupyx.scipy.ndimage as ndi
    who = "cupy"
else:
    xp = np
    import scipy.ndimage as ndi
    who = "scipy"


def bench(fn, reps=5, budget=20.0):
    fn()
    if gpu:
        xp.cuda.Device().synchronize()
        start, end = xp.cuda.Event(), xp.cuda.Event()
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        return xp.cuda.get_elapsed_time(start, end) / reps
    times = []
    t0 = time.perf_counter()
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
        if time.perf_counter() - t0 > budget:
            break
    times.sort()
    return times[len(times) // 2] * 1e3


def out(op, size, fn, reps=5, flops=0.0, bytes_=0.0):
    try:
        ms = bench(fn, reps)
    except Exception as ex:  # noqa: BLE001 - report and go on
        print(f"{who}: {op} {size} failed: {type(ex).__name__}: {ex}".splitlines()[0], flush=True)
        return
    print(f"{who:7s} {op:28s} {size:14s} {ms:10.4f} ms {flops / ms / 1e6:10.1f} GFLOP/s "
          f"{bytes_ / ms / 1e6:9.1f} GB/s", flush=True)


print("device:", "GPU, cupy " + xp.__version__ if gpu else "host CPU, scipy " + __import__("scipy").__version__)
n = 8192 if gpu else 2048
v = 512 if gpu else 128
rng = np.random.default_rng(25)
im = xp.asarray(rng.random((n, n), dtype=np.float32))
im2 = xp.asarray(rng.random((n, n), dtype=np.float32))
size = f"{n}x{n}"
out("elementwise chain", size, lambda: xp.sqrt(xp.clip(im, 0.1, 0.9) * 2 + 1), 20, 5 * n * n, 8 * n * n)
if gpu:
    fused = xp.fuse(lambda x: xp.sqrt(xp.minimum(xp.maximum(x, 0.1), 0.9) * 2 + 1))
    out("elementwise chain fused", size, lambda: fused(im), 20, 5 * n * n, 8 * n * n)
out("hypot", size, lambda: xp.hypot(im, im2), 20, 3 * n * n, 12 * n * n)
out("gradient_magnitude sobel", size, lambda: ndi.generic_gradient_magnitude(im, ndi.sobel), 5, 0, 8 * n * n)
out("gradient_magnitude gaussian 2", size, lambda: ndi.gaussian_gradient_magnitude(im, 2.0), 5, 0, 8 * n * n)
for k in (3, 5, 7):
    out(f"median_filter {k}x{k}", size, lambda: ndi.median_filter(im, size=k), 3 if k > 3 else 5)
out("grey_erosion 15x15", size, lambda: ndi.grey_erosion(im, size=15), 3)
out("rotate 30 order 3", size, lambda: ndi.rotate(im, 30, reshape=False, order=3), 3)
mask = im > 0.5
out("label", size, lambda: ndi.label(mask), 3)
del im2
vol = xp.asarray(rng.random((v, v, v), dtype=np.float32))
out("median_filter 5x5x5", f"{v}^3", lambda: ndi.median_filter(vol, size=5), 2)
out("zoom x2 order 3", f"{v}^3", lambda: ndi.zoom(vol, 2, order=3), 2)

# Issue 26: a stack of 256² slices (1,000 on the GPU, 100 on the CPU) through pad 8 (symmetric) → Gaussian σ=2 →
# Sobel x → one 2-norm per slice, each call over the whole stack (the slices' axis left alone).
del vol
slices = 1000 if gpu else 100
stack = xp.asarray(rng.random((slices, 256, 256), dtype=np.float32))


def slice_chain():
    padded = xp.pad(stack, ((0, 0), (8, 8), (8, 8)), mode="symmetric")
    smooth = ndi.gaussian_filter(padded, sigma=(0, 2, 2))
    edges = ndi.sobel(smooth, axis=-1)
    return xp.sqrt((edges * edges).sum(axis=(1, 2)))


out("slices pad gaussian sobel norm", f"{slices}x256x256", slice_chain, 5, 0, 4 * slices * (256 * 256 + 6 * 272 * 272))

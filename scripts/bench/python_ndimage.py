"""cliper's Python package on the ndimage cases of peer_ndimage.py (same sizes, same line format, peer name
`cliper-py`), and the costs the Python layer adds (issue 47, item 5):

    python3 scripts/bench/python_ndimage.py gpu     # 8192² images, 512³ volumes (the suite's GPU sizes)
    python3 scripts/bench/python_ndimage.py cpu     # 2048², 128³ (the suite's --quick sizes)

- `overhead`: per call on a 16-element device array, the time of `cliper.ndimage.median_filter(d, 3)` (the
  scipy-shaped Python function, one operation and no array parameter) minus that of `cliper._cliper.apply(
  "median", …)` with the keys it passes (the native call: the Rust operation and PyO3's crossing), and the
  crossing alone (`Handle.shape`, a getter doing no work). Calls
  are enqueued, not waited for, as CuPy's are; the median of 2,000.
- `copy`: numpy → device → numpy (`cliper.asarray(x).get()`) of 256 MiB of float32, as GB/s of data moved each
  way, beside the native upload/download alone (`_cliper.upload`, `Handle.get`) — the library's copy rate.
- each ndimage case: device arrays in and out, timed back to back after a warm-up, the device synchronised
  (median of a few runs).
"""
import sys
import time

import numpy as np

import cliper
from cliper import _cliper, ndimage

mode = sys.argv[1] if len(sys.argv) > 1 else "cpu"
gpu = mode == "gpu"
who = "cliper-py"


def median_seconds(fn, reps):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    times.sort()
    return times[len(times) // 2]


def timed_ms(fn, reps=5, budget=20.0):
    result = fn()
    result.synchronize()
    times = []
    t0 = time.perf_counter()
    for _ in range(reps):
        t = time.perf_counter()
        fn().synchronize()
        times.append(time.perf_counter() - t)
        if time.perf_counter() - t0 > budget:
            break
    times.sort()
    return times[len(times) // 2] * 1e3


def out(op, size, fn, reps=5, flops=0.0, bytes_=0.0):
    try:
        ms = timed_ms(fn, reps)
    except Exception as ex:  # noqa: BLE001 - report and go on
        print(f"{who}: {op} {size} failed: {type(ex).__name__}: {ex}".splitlines()[0], flush=True)
        return
    print(f"{who:9s} {op:28s} {size:14s} {ms:10.4f} ms {flops / ms / 1e6:10.1f} GFLOP/s "
          f"{bytes_ / ms / 1e6:9.1f} GB/s", flush=True)


device = next(d for d in cliper.devices() if d["id"] == cliper.default_device())
print("device:", device["name"], "|", device["platform"], "| python package", cliper.__version__)

# The Python layer's cost per call.
tiny = cliper.asarray(np.arange(16, dtype=np.float32))
for _ in range(200):
    ndimage.median_filter(tiny, 3)
tiny.synchronize()
keys = {"size": [3], "origin": [0], "border": "reflect", "value": 0.0, "rank": 1}
python_call = median_seconds(lambda: ndimage.median_filter(tiny, 3), 2000)
native_call = median_seconds(lambda: _cliper.apply("median", [tiny._handle], keys), 2000)
crossing = median_seconds(lambda: tiny._handle.shape, 2000)
tiny.synchronize()
print(f"overhead  python function {python_call * 1e6:8.1f} us, native call {native_call * 1e6:8.1f} us, "
      f"python layer {(python_call - native_call) * 1e6:8.1f} us, PyO3 crossing {crossing * 1e6:6.2f} us per call")

# numpy → device → numpy.
host = np.random.default_rng(47).random(64 << 20, dtype=np.float32)  # 256 MiB
nbytes = host.nbytes
cliper.asarray(host).get()
round_trip = median_seconds(lambda: cliper.asarray(host).get(), 5)
up = median_seconds(lambda: _cliper.upload(host, None).synchronize(), 5)
handle = _cliper.upload(host, None)
down = median_seconds(lambda: handle.get(), 5)
print(f"copy      numpy->device->numpy 256 MiB: {2 * nbytes / round_trip / 1e9:6.2f} GB/s moved "
      f"({round_trip * 1e3:.1f} ms); native upload {nbytes / up / 1e9:6.2f} GB/s, download {nbytes / down / 1e9:6.2f} GB/s, "
      f"both {2 * nbytes / (up + down) / 1e9:6.2f} GB/s")
del host, handle

n = 8192 if gpu else 2048
v = 512 if gpu else 128
rng = np.random.default_rng(25)
im = cliper.asarray(rng.random((n, n), dtype=np.float32))
size = f"{n}x{n}"
for k in (3, 5, 7):
    out(f"median_filter {k}x{k}", size, lambda: ndimage.median_filter(im, size=k), 3 if k > 3 else 5)
out("grey_erosion 15x15", size, lambda: ndimage.grey_erosion(im, size=15), 3)
out("rotate 30 order 3", size, lambda: ndimage.rotate(im, 30, reshape=False, order=3), 3)
out("gaussian_filter 2", size, lambda: ndimage.gaussian_filter(im, 2.0), 5)
out("uniform_filter 5", size, lambda: ndimage.uniform_filter(im, 5), 5)
del im
vol = cliper.asarray(rng.random((v, v, v), dtype=np.float32))
out("median_filter 5x5x5", f"{v}^3", lambda: ndimage.median_filter(vol, size=5), 2)
out("zoom x2 order 3", f"{v}^3", lambda: ndimage.zoom(vol, 2, order=3), 2)

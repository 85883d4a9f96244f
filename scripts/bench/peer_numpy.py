"""numpy / scipy on the CPU, on the `cliper-bench suite --quick` sizes, for the PoCL comparison.

Prints one line per case in peer_torch.py's format (`peer op size ms GFLOP/s GB/s`), so that
`cliper-bench report` matches them to the suite's cases. Times: median of several runs after one warm-up
(wall clock, time.perf_counter). numpy's matmul runs on its BLAS (OpenBLAS: all cores); scipy.ndimage is
single-threaded; both are what a researcher on this machine would call.
"""
import sys
import time

import numpy as np
import scipy.ndimage as ndi
import scipy.signal as sig


def bench(fn, reps=5, budget=10.0):
    fn()
    times = []
    start = time.perf_counter()
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
        if time.perf_counter() - start > budget:
            break
    times.sort()
    return times[len(times) // 2] * 1e3


def out(peer, op, size, ms, flops=0.0, bytes_=0.0):
    print(f"{peer:7s} {op:22s} {size:18s} {ms:10.4f} ms {flops / ms / 1e6:10.1f} GFLOP/s "
          f"{bytes_ / ms / 1e6:9.1f} GB/s", flush=True)


rng = np.random.default_rng(4)
print("device: host CPU, numpy", np.__version__, "scipy", __import__("scipy").__version__)
n = 1 << 22
x = rng.random(n, dtype=np.float32)
y = rng.random(n, dtype=np.float32)
z = np.empty_like(x)
out("numpy", "copy", str(n), bench(lambda: np.copyto(z, x), reps=20), 0, 8 * n)
out("numpy", "norm2 f32", str(n), bench(lambda: np.linalg.norm(x), reps=20), 2 * n, 4 * n)
out("numpy", "norm p=20 f32", str(n), bench(lambda: np.linalg.norm(x, 20)), 3 * n, 4 * n)
out("numpy", "dot f32", str(n), bench(lambda: np.dot(x, y), reps=20), 2 * n, 8 * n)
xc = x.view(np.complex64)
yc = y.view(np.complex64)
out("numpy", "vdot c64", str(n // 2), bench(lambda: np.vdot(xc, yc), reps=20), 8 * (n // 2), 8 * n)
for m in (512, 1024, 2048):
    a = rng.random((m, m), dtype=np.float32)
    b = rng.random((m, m), dtype=np.float32)
    out("numpy", "sgemm f32", f"{m}^3", bench(lambda: a @ b), 2 * m ** 3, 12 * m * m)
for m in (256, 1024):
    a = (rng.random((m, m)) + 1j * rng.random((m, m))).astype(np.complex64)
    b = (rng.random((m, m)) + 1j * rng.random((m, m))).astype(np.complex64)
    out("numpy", "cgemm c64", f"{m}^3", bench(lambda: a @ b), 8 * m ** 3, 24 * m * m)
m = 1024
a = rng.random((m, m))
b = rng.random((m, m))
out("numpy", "dgemm f64", f"{m}^3", bench(lambda: a @ b), 2 * m ** 3, 24 * m * m)
a = (rng.random((512, 512), dtype=np.float32) / 512).astype(np.float32)
out("numpy", "matrix_power 100 f32", "512", bench(lambda: np.linalg.matrix_power(a, 100)), 0, 0)
m = 2048
a = rng.random((m, m), dtype=np.float32)
out("numpy", "transpose copy", f"{m}x{m}", bench(lambda: np.ascontiguousarray(a.T), reps=10), 0, 8 * m * m)
out("numpy", "pad constant 8", f"{m}x{m}", bench(lambda: np.pad(a, 8), reps=10), 0, 8 * m * m)
out("numpy", "pad reflect 8", f"{m}x{m}", bench(lambda: np.pad(a, 8, mode="reflect"), reps=10), 0, 8 * m * m)
m = 1024
img = rng.random((m, m), dtype=np.float32)
for k in (3, 5, 7, 15, 31, 63):
    w = rng.random((k, k), dtype=np.float32)
    reps = 5 if k < 31 else 1
    out("scipy", f"ndimage.convolve {k}x{k}", f"{m}x{m}",
        bench(lambda: ndi.convolve(img, w, mode="constant"), reps=reps, budget=20.0), 2 * k * k * m * m, 8 * m * m)
w = rng.random((63, 63), dtype=np.float32)
out("scipy", "signal.fftconvolve 63x63", f"{m}x{m}", bench(lambda: sig.fftconvolve(img, w, mode="same")), 0, 8 * m * m)
batch = rng.random((64, 128, 128), dtype=np.float32)
w = rng.random((1, 3, 3), dtype=np.float32)
out("scipy", "ndimage.convolve 3x3 batch64", "64x128x128",
    bench(lambda: ndi.convolve(batch, w, mode="constant")), 2 * 9 * batch.size, 8 * batch.size)
vol = rng.random((128, 128, 128), dtype=np.float32)
w3 = rng.random((3, 3, 3), dtype=np.float32)
out("scipy", "ndimage.convolve 3x3x3", "128^3", bench(lambda: ndi.convolve(vol, w3, mode="constant")),
    2 * 27 * vol.size, 8 * vol.size)
# FFTs on the quick sizes of the suite's fft cases (numpy.fft: pocketfft, one core).
for shape, d in [((1024, 1024), 2), ((16, 128, 128), 2), ((64, 64, 64), 3), ((1 << 18,), 1), ((250, 250), 2),
                 ((509, 509), 2)]:
    z = (rng.random(shape, dtype=np.float32) + 1j * rng.random(shape, dtype=np.float32)).astype(np.complex64)
    axes = tuple(range(len(shape) - d, len(shape)))
    points = int(np.prod(shape[len(shape) - d:]))
    out("numpy", f"fftn c64 {d}-D", "x".join(map(str, shape)), bench(lambda: np.fft.fftn(z, axes=axes)),
        5.0 * z.size * np.log2(points), 16 * z.size)
sys.stdout.flush()

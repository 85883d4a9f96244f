#!/usr/bin/env python3
"""NUFFT peers on the issue's case (issue 49): a 256 x 256 grid, 10^6 points uniform over the band, tolerance 1e-6.
Writes the points (float64 [M, 2], cycles per FOV) to OUT/points.npy for `cliper-bench nufft` and times, on the
same points, FINUFFT (CPU; nthreads as given), and where importable SigPy's nufft on CuPy (GPU; its own
Kaiser-Bessel kernel, oversampling 1.25, width 4: it does not take a tolerance) and cuFINUFFT.
    usage: peer_nufft.py OUT [--threads N] [--points M] [--size N] [--eps E] [--double]
"""
import argparse
import os
import time

import numpy as np


def median_time(f, reps=5, sync=lambda: None):
    f()
    sync()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        sync()
        times.append(time.perf_counter() - t)
    return sorted(times)[len(times) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--points", type=int, default=1_000_000)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--eps", type=float, default=1e-6)
    ap.add_argument("--double", action="store_true", help="complex128 (default complex64)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rng = np.random.default_rng(49)
    n = a.size
    k = (rng.random((a.points, 2)) - 0.5) * n
    np.save(os.path.join(a.out, "points.npy"), k)
    cdt = np.complex128 if a.double else np.complex64
    rdt = np.float64 if a.double else np.float32
    c = (rng.standard_normal(a.points) + 1j * rng.standard_normal(a.points)).astype(cdt)
    f = (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))).astype(cdt)
    x, y = [np.ascontiguousarray(2 * np.pi * k[:, d] / n).astype(rdt) for d in range(2)]
    tag = f"{n}x{n}, {a.points} points, eps {a.eps:g}, {'complex128' if a.double else 'complex64'}"
    try:
        import finufft

        opts = dict(eps=a.eps, nthreads=a.threads)
        p1 = finufft.Plan(1, (n, n), eps=a.eps, nthreads=a.threads, dtype=cdt)
        p1.setpts(x, y)
        p2 = finufft.Plan(2, (n, n), eps=a.eps, nthreads=a.threads, dtype=cdt)
        p2.setpts(x, y)
        t1 = median_time(lambda: p1.execute(c))
        t2 = median_time(lambda: p2.execute(f))
        print(f"finufft {finufft.__version__} {tag}, {a.threads} threads: type 1 {t1 * 1e3:.2f} ms, type 2 {t2 * 1e3:.2f} ms (execute, points set)")
        del opts
    except ImportError as e:
        print(f"finufft: not importable ({e})")
    try:
        import cupy as cp
        import sigpy

        coord = cp.asarray(k.astype(rdt))
        cc, ff = cp.asarray(c), cp.asarray(f)
        sync = cp.cuda.Device().synchronize
        t2 = median_time(lambda: sigpy.nufft(ff, coord), sync=sync)
        t1 = median_time(lambda: sigpy.nufft_adjoint(cc, coord, (n, n)), sync=sync)
        print(f"sigpy {sigpy.__version__} (CuPy) {tag}: type 1 {t1 * 1e3:.2f} ms, type 2 {t2 * 1e3:.2f} ms (oversamp 1.25, width 4)")
    except ImportError as e:
        print(f"sigpy: not importable ({e})")
    try:
        import cupy as cp
        import cufinufft

        xg, yg = cp.asarray(x), cp.asarray(y)
        cc, ff = cp.asarray(c), cp.asarray(f)
        sync = cp.cuda.Device().synchronize
        q1 = cufinufft.Plan(1, (n, n), eps=a.eps, dtype=cdt)
        q1.setpts(xg, yg)
        q2 = cufinufft.Plan(2, (n, n), eps=a.eps, dtype=cdt)
        q2.setpts(xg, yg)
        t1 = median_time(lambda: q1.execute(cc), sync=sync)
        t2 = median_time(lambda: q2.execute(ff), sync=sync)
        print(f"cufinufft {cufinufft.__version__} {tag}: type 1 {t1 * 1e3:.2f} ms, type 2 {t2 * 1e3:.2f} ms (execute, points set)")
    except ImportError as e:
        print(f"cufinufft: not importable ({e})")


if __name__ == "__main__":
    main()

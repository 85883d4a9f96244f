"""Device↔host copy speed on a CUDA GPU through CuPy: pageable numpy memory (a fresh array, or into an existing
one) against page-locked memory, float64 arrays of 0.01–100 MB, mean of 5 after a warm-up. The measurement behind
cliper's staged host commands (docs/architecture.md, "Host commands"). Usage: python3 scripts/bench/host_transfers.py
"""
import time

import cupy as cp
import numpy as np

for mb in (0.01, 1, 10, 100):
    n = int(mb * 2**20 / 8)
    d = cp.arange(n, dtype=cp.float64)
    h = np.empty(n)
    pinned = np.frombuffer(cp.cuda.alloc_pinned_memory(n * 8), np.float64, n)
    cases = (("pageable get", lambda: d.get()), ("pageable into", lambda: d.get(out=h)),
             ("pinned into", lambda: d.get(out=pinned)), ("pageable set", lambda: d.set(h)),
             ("pinned set", lambda: d.set(pinned)))
    for name, f in cases:
        f()
        cp.cuda.Device().synchronize()
        t = time.perf_counter()
        for _ in range(5):
            f()
        cp.cuda.Device().synchronize()
        ms = (time.perf_counter() - t) / 5 * 1e3
        print(f"{mb:7.2f} MB {name:14s} {ms:8.3f} ms {mb / 1024 / (ms / 1e3):7.2f} GB/s")

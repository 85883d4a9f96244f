#!/usr/bin/env python3
"""The exact references of tests/bart/noncartesian.rs, from the BART fixtures in tests/fixtures/bart_nufft: the
non-Cartesian SENSE operator as an explicit matrix in float64 (BART's convention: A_c = E · diag(s_c), with
E[m, r] = exp(-2 pi i k_m . r / N) / sqrt(N) over the centred image positions r), and 30 iterations of the
textbook conjugate gradients on (A^H A + 0.01 I) x = A^H y from x = 0, on the data as given and divided by pics's
scaling rule applied to A^H y (90th percentile unless the maximum stands out). Writes exact_cg.npy and
exact_cg_scaled.npy (complex128 [40, 40]) and prints each one's distance to bart pics -t's image: BART 0.8's
gridding errs by ~1e-2, so pics -t sits ~3.5e-2 from the exact iteration.
    usage: python3 scripts/bart/noncart_ref.py
"""
import os

import numpy as np
from cfl import readcfl

D = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures", "bart_nufft")


def main():
    rd = lambda n: readcfl(os.path.join(D, n))
    n = 40
    k = rd("traj").real.reshape(3, -1, order="F")
    r = np.stack(np.meshgrid(np.arange(n) - n // 2, np.arange(n) - n // 2, indexing="ij"), 0).reshape(2, -1)
    e = np.exp(-2j * np.pi * (k[:2].T @ r) / n) / n
    ksp = rd("ksp")
    coils = ksp.shape[3]
    y = np.stack([ksp[0, :, :, c].reshape(-1, order="F") for c in range(coils)])
    sens = rd("sens").squeeze()
    s = np.stack([sens[:, :, c].reshape(-1) for c in range(coils)])
    fwd = lambda x: np.stack([e @ (s[c] * x) for c in range(coils)])
    adj = lambda v: sum(np.conj(s[c]) * (e.conj().T @ v[c]) for c in range(coils))

    normal = lambda lam: (lambda v: adj(fwd(v)) + lam * v)

    mags = np.sort(np.abs(adj(y)))
    m = len(mags)
    median, p90, mx = mags[m // 2], mags[int(m * 0.9)], mags[-1]
    scale = p90 if (mx - p90) < 2 * (p90 - median) else mx
    print(f"scaling rule on the exact adjoint: {scale:.6e}")
    for name, data, bart in (("exact_cg", y, "pics_t_l2"), ("exact_cg_scaled", y / scale, "pics_t_l2_scaled")):
        x = cg(normal(0.01), adj(data), 30)
        b = rd(bart).squeeze().reshape(-1)
        print(f"{bart} against {name}: {np.linalg.norm(b - x) / np.linalg.norm(x):.3e}")
        np.save(os.path.join(D, f"{name}.npy"), x.reshape(n, n))
    coil = rd("coil1").reshape(-1, order="F")
    x = cg(lambda v: e.conj().T @ (e @ v), e.conj().T @ coil, 50)
    b = rd("inverse").squeeze().reshape(-1)
    print(f"inverse against exact_inverse: {np.linalg.norm(b - x) / np.linalg.norm(x):.3e}")
    np.save(os.path.join(D, "exact_inverse.npy"), x.reshape(n, n))


def cg(apply, b, iterations):
    """The textbook conjugate gradients on apply(x) = b from x = 0."""
    x = np.zeros_like(b)
    res = b.copy()
    p = res.copy()
    rs = np.vdot(res, res).real
    for _ in range(iterations):
        ap = apply(p)
        a = rs / np.vdot(p, ap).real
        x += a * p
        res -= a * ap
        rn = np.vdot(res, res).real
        p = res + (rn / rs) * p
        rs = rn
    return x

if __name__ == "__main__":
    main()

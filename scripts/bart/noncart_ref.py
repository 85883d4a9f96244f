#!/usr/bin/env python3
"""The exact references of tests/bart/noncartesian.rs, from the BART fixtures in tests/fixtures/bart_nufft: the
non-Cartesian SENSE operator as an explicit matrix in float64 (BART's convention: A_c = E · diag(s_c), with
E[m, r] = exp(-2 pi i k_m . r / N) / sqrt(N) over the centred image positions r), and 30 iterations of the
textbook conjugate gradients on (A^H A + 0.01 I) x = A^H y from x = 0, on the data as given and divided by pics's
scaling rule applied to A^H y (90th percentile unless the maximum stands out). Writes exact_cg.npy and
exact_cg_scaled.npy (complex128 [40, 40]) and prints each one's distance to bart pics -t's image: BART 0.8's
gridding errs by ~1e-2, so pics -t sits ~3.5e-2 from the exact iteration. With the maps normalised (sens_n) and
the data scaled by pics's rule, pics's FISTA (l1 on Daubechies-2 wavelets, lambda 0.005, 30 iterations, BART's
random cycle spinning) at step 0.01 (pics -s 0.01) and at 0.95 over A^H A's largest eigenvalue (pics -e; here the
exact eigenvalue, where pics runs 30 power steps), and ADMM (isotropic TV, lambda 0.01, 50 CG iterations in all),
as scripts/bart/pics_ref.py re-derives them: exact_l1.npy, exact_l1_e.npy, exact_tv.npy against pics_t_l1,
pics_t_l1_e, pics_t_tv. exact_grid_rsos.npy (float64 [40, 40]): gridding with SigPy's Pipe-Menon weights (dcf.npy)
and the root sum of squares over the coils.
    usage: python3 scripts/bart/noncart_ref.py
"""
import os

import numpy as np
import pics_ref
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
    # The penalised reconstructions need maps of unit root-sum-of-squares (sens_n): BART's analytic maps reach
    # 1.2e5, which puts A^H A's largest eigenvalue near 1e10 and makes any FISTA step diverge.
    sens_n = rd("sens_n").squeeze()
    s = np.stack([sens_n[:, :, c].reshape(-1) for c in range(coils)])
    mags = np.sort(np.abs(adj(y)))
    median, p90, mx = mags[m // 2], mags[int(m * 0.9)], mags[-1]
    scale = p90 if (mx - p90) < 2 * (p90 - median) else mx
    print(f"scaling rule on the exact adjoint with sens_n: {scale:.6e}")
    op = ImageOperator(lambda v: adj(fwd(v.reshape(-1))).reshape(n, n))
    eigen = np.linalg.eigvalsh(np.stack([op.N(u.reshape(n, n)).reshape(-1) for u in np.eye(n * n)], 1)).max()
    print(f"largest eigenvalue of A^H A: {eigen:.6e}")
    b = adj(y / scale).reshape(n, n)
    for name, x, bart in (
        ("exact_l1", pics_ref.fista(op, b, 0.005, 30, step=0.01), "pics_t_l1"),
        ("exact_l1_e", pics_ref.fista(op, b, 0.005, 30, step=0.95 / eigen), "pics_t_l1_e"),
        ("exact_tv", pics_ref.admm_tv(op, b, 0.01, 50)[0], "pics_t_tv"),
    ):
        bi = rd(bart).squeeze()
        print(f"{bart} against {name}: {np.linalg.norm(bi - x) / np.linalg.norm(x):.3e}")
        np.save(os.path.join(D, f"{name}.npy"), x)
    # Gridding and RSoS: each coil's exact adjoint of its samples weighted by SigPy's Pipe-Menon weights (dcf.npy,
    # scripts/nufft/dcf_ref.py) in grid cells, i.e. times (integral of SigPy's kernel)^4, then the root sum of squares.
    import scipy.integrate
    import scipy.special
    kb = lambda x: scipy.special.i0(8 * np.sqrt(max(0.0, 1 - (x / 2) ** 2)))
    cell = scipy.integrate.quad(kb, -2, 2, limit=200)[0] ** 4
    w = np.load(os.path.join(D, "dcf.npy")).astype(np.float64).reshape(-1, order="F") * cell
    rsos = np.sqrt(sum(np.abs(e.conj().T @ (w * y[c])) ** 2 for c in range(coils)))
    np.save(os.path.join(D, "exact_grid_rsos.npy"), rsos.reshape(n, n))
    print(f"gridding + RSoS: cell scale {cell:.6e}, image max {rsos.max():.4e}")
    coil = rd("coil1").reshape(-1, order="F")
    x = cg(lambda v: e.conj().T @ (e @ v), e.conj().T @ coil, 50)
    b = rd("inverse").squeeze().reshape(-1)
    print(f"inverse against exact_inverse: {np.linalg.norm(b - x) / np.linalg.norm(x):.3e}")
    np.save(os.path.join(D, "exact_inverse.npy"), x.reshape(n, n))


class ImageOperator:
    """An image-to-image normal operator as pics_ref.py's solvers take it (`N`)."""

    def __init__(self, normal):
        self.N = normal


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

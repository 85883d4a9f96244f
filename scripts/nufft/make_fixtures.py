#!/usr/bin/env python3
"""Writes the NUFFT fixtures of tests/fft/nufft.rs into tests/fixtures/nufft/ with FINUFFT (PyPI `finufft`, 2.5.1)
and the exact sums in float64 numpy. The tests read these files; they never run FINUFFT.

Convention (BART's `bart nufft`, which cliper's Nufft follows): an image of shape N (centred: index i holds position
r = i - N//2), points k in cycles per field of view,
    type 2 (forward):  y_m = 1/sqrt(prod N) * sum_r x_r exp(-2 pi i sum_d k_md r_d / N_d)
    type 1 (adjoint):  x_r = 1/sqrt(prod N) * sum_m y_m exp(+2 pi i sum_d k_md r_d / N_d)
In FINUFFT's terms the points are 2 pi k / N radians, the modes are the image (modeord=0 is the same centring:
mode index 0 is frequency -N//2), type 2 with isign=-1 and type 1 with isign=+1, divided by sqrt(prod N).
FINUFFT 2.5's default kernel is its PSWF-like one (kerformula 8); the files hold what FINUFFT gives by default.

Per case NAME (1-D 37; 2-D 40 x 27; 3-D 12 x 9 x 10):
    NAME_points.npy   [M, d] float64, cycles per FOV: uniform in [-N/2, N/2) plus the edges -N/2 and N/2 - 1e-12
                      and a few points beyond, up to +-0.7 N (the transform is periodic)
    NAME_image.npy    complex128 image N (type 2's input), NAME_values.npy complex128 [M] (type 1's input)
    NAME_t2_exact.npy, NAME_t1_exact.npy     the exact sums (float64)
    NAME_t2_finufft_EPS.npy, NAME_t1_finufft_EPS.npy   FINUFFT at eps = 1e-3, 1e-6, 1e-9 (complex128)
Usage: python3 scripts/nufft/make_fixtures.py   (pip install finufft==2.5.1 numpy)
"""
import os

import finufft
import numpy as np

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures", "nufft")
CASES = {"line": ((37,), 61), "plane": ((40, 27), 700), "volume": ((12, 9, 10), 500)}
EPS = (1e-3, 1e-6, 1e-9)


def points(rng, shape, m):
    d = len(shape)
    n = np.array(shape, float)
    k = (rng.random((m, d)) - 0.5) * n
    k[0] = -n / 2
    k[1] = n / 2 - 1e-12
    k[2:6] = (rng.random((4, d)) - 0.5) * 1.4 * n
    return k


def exact(shape, k, image=None, values=None):
    grids = np.meshgrid(*[np.arange(n) - n // 2 for n in shape], indexing="ij")
    r = np.stack([g.ravel() for g in grids], axis=1).astype(float)
    phase = -2j * np.pi * (k / np.array(shape, float)) @ r.T  # [M, prod N]
    e = np.exp(phase) / np.sqrt(np.prod(shape))
    if image is not None:
        return e @ image.ravel()
    return (e.conj().T @ values).reshape(shape)


def finufft_pair(shape, k, image, values, eps):
    x = [np.ascontiguousarray(2 * np.pi * k[:, d] / shape[d]) for d in range(len(shape))]
    scale = 1 / np.sqrt(np.prod(shape))
    t2 = {1: finufft.nufft1d2, 2: finufft.nufft2d2, 3: finufft.nufft3d2}[len(shape)](*x, image, eps=eps, isign=-1)
    t1 = {1: finufft.nufft1d1, 2: finufft.nufft2d1, 3: finufft.nufft3d1}[len(shape)](
        *x, values, n_modes=shape, eps=eps, isign=1
    )
    return t2 * scale, t1 * scale


def main():
    rng = np.random.default_rng(49)
    os.makedirs(OUT, exist_ok=True)
    print("finufft", finufft.__version__)
    for name, (shape, m) in CASES.items():
        k = points(rng, shape, m)
        image = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        values = rng.standard_normal(m) + 1j * rng.standard_normal(m)
        t2, t1 = exact(shape, k, image=image), exact(shape, k, values=values)
        save = lambda what, a: np.save(os.path.join(OUT, f"{name}_{what}.npy"), a)
        save("points", k)
        save("image", image)
        save("values", values)
        save("t2_exact", t2)
        save("t1_exact", t1)
        for eps in EPS:
            f2, f1 = finufft_pair(shape, k, image, values, eps)
            e2 = np.linalg.norm(f2 - t2) / np.linalg.norm(t2)
            e1 = np.linalg.norm(f1 - t1) / np.linalg.norm(t1)
            print(f"{name} {shape} M={m} eps={eps:g}: finufft vs exact, type 2 {e2:.2e}, type 1 {e1:.2e}")
            save(f"t2_finufft_{eps:g}", f2)
            save(f"t1_finufft_{eps:g}", f1)


if __name__ == "__main__":
    main()

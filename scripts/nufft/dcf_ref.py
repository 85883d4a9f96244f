#!/usr/bin/env python3
"""Pipe–Menon density compensation of the NUFFT fixtures' trajectory, by SigPy (the reference for cliper's DCF).

Writes tests/fixtures/bart/nc_t_dcf.npy: float32 [128 samples, 51 spokes], the weights of
tests/fixtures/bart/nc_t (`bart traj -r -G -x 64 -o 2 -y 51`, make_noncart.sh) for a 64 × 64 image, and
tests/fixtures/bart_nufft/dcf.npy: float32 [80, 41], those of tests/fixtures/bart_nufft/traj for 40 × 40 (the
gridding reconstruction's reference, scripts/bart/noncart_ref.py).

Made with sigpy 0.1.27 (`pip install sigpy`): `sigpy.mri.pipe_menon_dcf(coord, img_shape=(64, 64))` with its
defaults, which are (sigpy/mri/dcf.py, sigpy/interp.py):
  - w ← 1 for every sample, then 30 iterations (max_iter) of  w ← w / |Gᴴ G w|,  no convergence test;
  - G = sigpy.linop.Gridding(img_shape, coord, param=beta, width=width, kernel="kaiser_bessel"): spreading on
    the image's own grid (no oversampling) with beta = 8, width = 4 grid points (|i − c| ≤ 2 per axis),
    K(u) = I0(β √(1 − u²)) with u = (i − c) / (width / 2), separable over the axes, I0 by the polynomial
    approximation of Abramowitz–Stegun 9.8.1/9.8.2 (not normalised: K(0) = 1);
  - grid index of coordinate c along an axis of size N: c itself, no centring, every kernel point wrapped mod N
    (sigpy/interp.py `_gridding2`: output[y % ny, x % nx]): the grid is periodic, so only the spacing matters;
  - the `n=128` argument is unused by this version.
sigpy's coord is [..., ndim] with coord[..., d] along image axis d: BART's traj[0] (kx) pairs with axis 0.
"""
from pathlib import Path
import sys

import numpy as np
import sigpy.mri

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "bart"))
import cfl  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "bart"


def main():
    for traj_path, shape, out in (
        (FIXTURES / "nc_t", (64, 64), FIXTURES / "nc_t_dcf.npy"),
        (ROOT / "tests" / "fixtures" / "bart_nufft" / "traj", (40, 40), ROOT / "tests" / "fixtures" / "bart_nufft" / "dcf.npy"),
    ):
        traj = cfl.readcfl(str(traj_path))
        # [3, samples, spokes, 1…] → [samples, spokes, 2] (kx, ky), float32 as sigpy computes on it.
        coord = np.ascontiguousarray(np.moveaxis(traj.real.reshape(traj.shape[:3])[:2], 0, -1)).astype(np.float32)
        weights = sigpy.mri.pipe_menon_dcf(coord, img_shape=shape, show_pbar=False)
        weights = np.asarray(weights, dtype=np.float32)
        np.save(out, weights)
        print(f"{out.name} {weights.shape} min {weights.min():.4g} max {weights.max():.4g}")


if __name__ == "__main__":
    main()

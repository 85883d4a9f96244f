#!/usr/bin/env python3
"""BART 0.8.00's NUFFT (src/noncart/grid.c, nufft.c) reproduced in numpy, checked against the fixtures of
tests/fixtures/bart/make_noncart.sh (nc_t, nc_img, nc_k, nc_k_dft, nc_adj).

BART computes on 2^d half-shifted N grids (linear phases, fftmod, √0.5 per axis); mathematically that is one
2N-per-axis grid, which is what this reference computes (in float64, with BART's float table):
  1. image × rolloff:  Π_d ftkb(β, width · (x_d − N_d/2)/N_d) / ftkb(β, 0),  ftkb(β, u) = a / sinh(a),
     a = √(β² − (π u)²)  (grid.c rolloff_correction with os = 1 in the decomposed form);
  2. zero-padded to 2N_d, the unitary DFT onto grid index g ∈ [0, 2N_d) at frequency (g − N_d)/2 cycles/FOV,
     times √0.5 per axis (measured: see dft_to_grid);
  3. interpolation at pos = 2·k_d + N_d (grid units) over the integer g with |g − pos| ≤ width (width = 3),
     weight Π_d table-lookup( |g − pos| / width ): BART's 101-entry table t[i] = kb(β, i/99/2),
     kb(β, x) = I0(β √(1 − (2x)²)) / I0(β) for |x| < 1/2 else 0, looked up at index ⌊u·99⌋ with linear
     interpolation (`intlookup` uses n − 1 = 99 intervals of a 101-entry table: t[100] is 0);
     β = π √(((2·width/os)(os − 0.5))² − 0.8) with os = 2 (Beatty's formula: π√(4.5² − 0.8) ≈ 13.855);
     the grid is not periodic (points outside [0, 2N) dropped).
The adjoint is the transpose of each step. Run: python3 scripts/bart/nufft_ref.py (prints the NRMSEs).
"""
from pathlib import Path
import sys

import numpy as np
from scipy.special import i0

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "bart"))
import cfl  # noqa: E402

FIX = ROOT / "tests" / "fixtures" / "bart"
WIDTH = 3.0
OS = 2.0
BETA = np.pi * np.sqrt(((WIDTH * 2.0 / OS) * (OS - 0.5)) ** 2 - 0.8)
TABLE_SIZE = 100


def kb(x):
    return np.where(np.abs(x) >= 0.5, 0.0, i0(BETA * np.sqrt(np.maximum(1.0 - (2.0 * x) ** 2, 0.0))) / i0(BETA))


TABLE = kb(np.arange(TABLE_SIZE + 1) / (TABLE_SIZE - 1) / 2.0).astype(np.float32).astype(np.float64)


def lookup(u):
    """BART's intlookup: index ⌊u·(n−1)⌋, linear interpolation between table[index] and table[index + 1]."""
    u = np.asarray(u, dtype=np.float32)
    scaled = u * np.float32(TABLE_SIZE - 1)
    index = scaled.astype(np.int64)
    frac = (scaled - index.astype(np.float32)).astype(np.float64)
    return (1.0 - frac) * TABLE[index] + frac * TABLE[np.minimum(index + 1, TABLE_SIZE)]


def ftkb(u):
    a = np.sqrt(BETA**2 - (np.pi * u) ** 2 + 0j)
    return np.where(a == 0, 1.0, a / np.sinh(a)).real


def rolloff(n):
    p = (np.arange(n) - n / 2.0) / n
    return ftkb(p * WIDTH) / ftkb(0.0)


def dft_to_grid(n):
    """[2n, n]: image index x → grid index g, frequency (g − n)/2 cycles/FOV, unitary on the 2n grid."""
    g = np.arange(2 * n) - n
    x = np.arange(n) - n // 2
    # The scale: a unitary 2N DFT times √0.5 per axis. Measured, not derived: against the fixtures the unitary
    # 2N DFT alone is exactly 2× bart's output in 2-D (best-fit scale 0.500000); nufft.c scales its linear
    # phases by fftscale and by scx = √0.5 per transformed axis (compute_linphases' caller).
    return np.exp(-2j * np.pi * np.outer(g, x) / (2 * n)) / np.sqrt(2 * n) * np.sqrt(0.5)


def interpolation(coords, n):
    """[samples, 2n] sparse-as-dense weights of BART's kernel along one axis."""
    pos = (np.float32(OS) * coords.astype(np.float32) + np.float32(2 * n / 2.0)).astype(np.float64)
    g = np.arange(2 * n)
    dist = np.abs(g[None, :].astype(np.float32) - pos[:, None].astype(np.float32))
    return np.where(dist <= WIDTH, lookup(np.minimum(dist / np.float32(WIDTH), 1.0)), 0.0)


def forward(traj, img):
    nx, ny = img.shape
    pre = img * np.outer(rolloff(nx), rolloff(ny))
    grid = dft_to_grid(nx) @ pre @ dft_to_grid(ny).T
    wx, wy = interpolation(traj[0], nx), interpolation(traj[1], ny)
    return np.einsum("sg,sh,gh->s", wx, wy, grid)


def adjoint(traj, ksp, shape):
    nx, ny = shape
    wx, wy = interpolation(traj[0], nx), interpolation(traj[1], ny)
    grid = np.einsum("sg,sh,s->gh", wx, wy, ksp)
    img = dft_to_grid(nx).conj().T @ grid @ dft_to_grid(ny).conj()
    return img * np.outer(rolloff(nx), rolloff(ny))


def nrmse(got, want):
    return np.linalg.norm(got - want) / np.linalg.norm(want)


def main():
    t = cfl.readcfl(str(FIX / "nc_t"))
    traj = t.real.reshape(3, -1)
    img = cfl.readcfl(str(FIX / "nc_img")).reshape(64, 64).astype(np.complex128)
    ksp = cfl.readcfl(str(FIX / "nc_k")).ravel()
    ours = forward(traj, img)
    scale = np.vdot(ours, ksp) / np.vdot(ours, ours)
    print(f"beta {BETA:.6f}; forward: NRMSE to bart nufft {nrmse(ours, ksp):.3e} (best-fit scale {scale:.6f})")
    print(f"forward: bart nufft vs bart nufft -s / 64: {nrmse(ksp, cfl.readcfl(str(FIX / 'nc_k_dft')).ravel() / 64):.3e}")
    rand = cfl.readcfl(str(FIX / "nc_rand")).reshape(64, 64).astype(np.complex128)
    print(f"forward, random image: NRMSE to bart nufft {nrmse(forward(traj, rand), cfl.readcfl(str(FIX / 'nc_k_rand')).ravel()):.3e}")
    adj = adjoint(traj, ksp, (64, 64))
    want = cfl.readcfl(str(FIX / "nc_adj")).reshape(64, 64)
    scale = np.vdot(adj, want) / np.vdot(adj, adj)
    print(f"adjoint: NRMSE to bart nufft -a {nrmse(adj, want):.3e} (best-fit scale {scale:.6f})")


if __name__ == "__main__":
    main()

"""cliper.mri against BART on the committed phantom (tests/fixtures/bart/make.sh made it: `bart phantom -k -s 8
-x 96`, a Poisson mask, `bart ecalib -m1`, `bart pics …`) and against numpy's float64 SENSE/RSoS. The solvers
match `bart pics` to NRMSE 1e-3 (tests/bart.rs's bound: float32 iterations of 30 CG steps or FISTA/ADMM
differ in rounding order), the direct combinations numpy's float64 to rtol 1e-5 (float32 FFTs of 96²)."""

import numpy as np
import pytest

from cliper import mri


def read_cfl(root, name, fixtures="bart"):
    """A BART CFL pair in cliper's (SigPy's) order: BART's dims reversed, singleton axes dropped."""
    folder = root / "tests" / "fixtures" / fixtures
    dims = [int(n) for n in (folder / f"{name}.hdr").read_text().splitlines()[1].split()]
    data = np.fromfile(folder / f"{name}.cfl", dtype=np.complex64).reshape(dims[::-1])
    return data.squeeze()


def nrmse(got, want):
    return np.linalg.norm(got - want) / np.linalg.norm(want)


@pytest.fixture
def phantom(root):
    kspace, mask, maps = (read_cfl(root, n) for n in ("phantom8", "phantom8_mask", "phantom8_sens"))
    return kspace * mask, maps


def test_solvers_match_bart_pics(root, phantom):
    undersampled, maps = phantom
    assert undersampled.shape == maps.shape == (8, 96, 96)
    assert nrmse(mri.cg_sense(undersampled, maps, lamda=0.01, max_iter=30), read_cfl(root, "pics_l2")) < 1e-3
    assert nrmse(mri.l1_wavelet(undersampled, maps, 5, max_iter=30, cycle_spinning=False), read_cfl(root, "pics_l1_n")) < 1e-3
    assert nrmse(mri.tv(undersampled, maps, 10, max_iter=50), read_cfl(root, "pics_tv")) < 1e-3


def test_espirit_maps_reconstruct_as_bart_ecalib(root, phantom):
    undersampled, _ = phantom
    maps = mri.espirit(undersampled)
    image = mri.cg_sense(undersampled, maps, lamda=0.01, max_iter=30)
    bart = read_cfl(root, "pics_l2")
    sign = np.sign(np.real(np.vdot(image, bart)))  # eigenvectors are defined up to a sign
    assert nrmse(image * sign, bart) < 1e-3


def test_direct_combinations_match_numpy(root, phantom):
    kspace = read_cfl(root, "phantom8").astype(np.complex128)
    maps = read_cfl(root, "phantom8_sens").astype(np.complex128)
    images = np.fft.fftshift(np.fft.ifft2(np.fft.ifftshift(kspace, axes=(-2, -1))), axes=(-2, -1))
    np.testing.assert_allclose(mri.rsos(kspace), np.sqrt((abs(images) ** 2).sum(0)), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(mri.sense(kspace, maps), (images * maps.conj()).sum(0), rtol=1e-5, atol=1e-8)
    walsh = mri.walsh(kspace)
    assert walsh.shape == maps.shape
    np.testing.assert_allclose(np.sqrt((abs(walsh) ** 2).sum(0)), 1.0, rtol=1e-5)


def test_shapes_that_do_not_go_together_are_refused(phantom):
    undersampled, maps = phantom
    with pytest.raises(ValueError) as refused:
        mri.sense(undersampled, maps[:4])
    assert "\n" not in str(refused.value)


def test_frames_are_one_problem_as_bart_pics(root):
    """Three frames with their own line patterns sharing the maps (tests/fixtures/bart_frames/make.sh: BART's TIME
    dimension), k-space [frames, coils, y, x]: cg_sense, l1_wavelet and tv solve them as one problem, as `bart
    pics` does. The k-space is divided by the scale pics printed (4561.680664: these functions run pics's -w 1),
    and pics's image is −1 times ours on an axis of 38 ≡ 2 (mod 4) (docs/mri.md). Tolerance 1e-5: the Rust test
    measures 2e-7 to 1.2e-6."""
    kspace = read_cfl(root, "ksp", "bart_frames") / np.float32(4561.680664)
    maps = read_cfl(root, "ksp_sens", "bart_frames")
    assert kspace.shape == (3, 4, 38, 40) and maps.shape == (4, 38, 40)
    for image, name in [
        (mri.cg_sense(kspace, maps, lamda=0.01, max_iter=30), "pics_l2"),
        # Cycle spinning draws its shifts per axis in BART's order; SigPy's order reverses the axes (as the test above).
        (mri.l1_wavelet(kspace, maps, 0.005, max_iter=30, cycle_spinning=False), "pics_l1_n"),
        (mri.tv(kspace, maps, 0.01, max_iter=50), "pics_tv"),
    ]:
        bart = -read_cfl(root, name, "bart_frames")
        assert image.shape == bart.shape == (3, 38, 40)
        for frame in range(3):
            assert nrmse(image[frame], bart[frame]) < 1e-5, name


def exact_nufft(image, coord):
    """The type 2 sum in float64: Σ_r x_r exp(−2πi k·r/N) / √ΠN over the last d axes, r centred at N//2."""
    d = coord.shape[-1]
    shape = image.shape[-d:]
    grids = np.meshgrid(*[np.arange(n) - n // 2 for n in shape], indexing="ij")
    r = np.stack([g.ravel() / n for g, n in zip(grids, shape)], axis=-1)
    e = np.exp(-2j * np.pi * coord.reshape(-1, d) @ r.T) / np.sqrt(np.prod(shape))
    flat = image.reshape(image.shape[:-d] + (-1,)).astype(np.complex128)
    return (flat @ e.T).reshape(image.shape[:-d] + coord.shape[:-1])


@pytest.mark.parametrize("shape, points", [((37,), (11,)), ((13, 10), (7, 5)), ((7, 9, 6), (23,))])
@pytest.mark.parametrize("dtype, eps, tol", [(np.complex64, 1e-6, 2e-6), (np.complex128, 1e-10, 1e-9)])
def test_nufft_matches_the_exact_sums(shape, points, dtype, eps, tol):
    """mri.nufft and mri.nufft_adjoint against the float64 sums, 1-D to 3-D, odd sizes, a batch of 3 in front, random
    points across [−N/2, N/2): within the requested accuracy (plus float32's rounding for complex64); the adjoint as
    the exact transpose."""
    rng = np.random.default_rng(7)
    d = len(shape)
    coord = (rng.random(points + (d,)) - 0.5) * np.array(shape)
    image = (rng.standard_normal((3,) + shape) + 1j * rng.standard_normal((3,) + shape)).astype(dtype)
    got = mri.nufft(image, coord, eps=eps)
    want = exact_nufft(image, coord)
    assert got.shape == (3,) + points and got.dtype == dtype
    assert nrmse(got, want) < tol
    values = (rng.standard_normal((3,) + points) + 1j * rng.standard_normal((3,) + points)).astype(dtype)
    adjoint = mri.nufft_adjoint(values, coord, shape, eps=eps)
    assert adjoint.shape == (3,) + shape
    # <A x, y> = <x, Aᴴ y> with A the exact sums.
    lhs = np.vdot(exact_nufft(image, coord), values)
    rhs = np.vdot(image.astype(np.complex128), adjoint.astype(np.complex128))
    assert abs(lhs - rhs) / abs(lhs) < 10 * tol


def test_nufft_with_barts_kernel_matches_bart_nufft(root):
    """kernel="bart" on tests/fixtures/bart_nufft (bart 0.8.00's traj [3, 80, 41] and its nufft / nufft -a), within
    1e-4 (the Rust test measures 9e-7 and 3e-7). Read in SigPy's order (BART's dimensions reversed), the trajectory
    is [41, 80, 3] with (k_x, k_y, k_z) along its last axis: coordinates along BART's (x, y), so the image is taken
    with BART's x first (transposed from SigPy's [y, x])."""
    traj = read_cfl(root, "traj", "bart_nufft")
    coord = np.ascontiguousarray(traj.real[..., :2])
    image = read_cfl(root, "image", "bart_nufft").T
    values = mri.nufft(image, coord, kernel="bart")
    assert nrmse(values, read_cfl(root, "nufft", "bart_nufft")) < 1e-4
    adjoint = mri.nufft_adjoint(read_cfl(root, "coil1", "bart_nufft"), coord, (40, 40), kernel="bart")
    assert nrmse(adjoint.T, read_cfl(root, "adjoint", "bart_nufft")) < 1e-4
    with pytest.raises(ValueError, match="kernel bart"):
        mri.nufft(image, coord, eps=1e-9, kernel="bart")

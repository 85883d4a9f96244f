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

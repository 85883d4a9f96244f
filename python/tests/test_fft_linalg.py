"""cliper.fft and cliper.linalg against numpy in float64 on shapes that are no power of two. Tolerances: float64
data, rtol 1e-10 (the device's FFT and GEMM accumulate in float64; errors grow as log n and n·eps); float32 data
rtol 2e-5 (float32 rounding over n ≈ 10² terms)."""

import numpy as np
import pytest

import cliper
from cliper import fft, linalg


@pytest.fixture
def cplx(rng):
    return rng.standard_normal((6, 10, 7)) + 1j * rng.standard_normal((6, 10, 7))


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_complex_transforms_match_numpy(cplx, norm):
    np.testing.assert_allclose(fft.fftn(cplx, norm=norm), np.fft.fftn(cplx, norm=norm), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fft.ifftn(cplx, norm=norm), np.fft.ifftn(cplx, norm=norm), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fft.fft(cplx, axis=1, norm=norm), np.fft.fft(cplx, axis=1, norm=norm), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fft.ifft2(cplx, norm=norm), np.fft.ifft2(cplx, norm=norm), rtol=1e-10, atol=1e-12)


def test_n_and_s_crop_or_pad_as_numpy(cplx):
    np.testing.assert_allclose(fft.fft(cplx, n=13), np.fft.fft(cplx, n=13), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fft.fft2(cplx, s=(4, 9)), np.fft.fft2(cplx, s=(4, 9)), rtol=1e-10, atol=1e-10)


def test_real_transforms_match_numpy(rng):
    x = rng.standard_normal((9, 14))
    np.testing.assert_allclose(fft.rfft(x), np.fft.rfft(x), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fft.rfftn(x), np.fft.rfftn(x), rtol=1e-10, atol=1e-10)
    spectrum = np.fft.rfftn(x)
    np.testing.assert_allclose(fft.irfftn(spectrum, s=x.shape), x, rtol=1e-10, atol=1e-12)
    odd = rng.standard_normal(15)
    np.testing.assert_allclose(fft.irfft(np.fft.rfft(odd), n=15), odd, rtol=1e-10, atol=1e-12)
    single = x.astype(np.float32)
    got = fft.rfft2(single)
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, np.fft.rfft2(x), rtol=2e-5, atol=2e-5)


def test_shifts_and_device_arrays_stay_on_the_device(cplx):
    for axes in (None, (0, 2), 1):
        np.testing.assert_array_equal(fft.fftshift(cplx, axes), np.fft.fftshift(cplx, axes))
        np.testing.assert_array_equal(fft.ifftshift(cplx, axes), np.fft.ifftshift(cplx, axes))
    d = cliper.asarray(cplx)
    image = fft.ifftshift(fft.ifftn(fft.fftshift(d, axes=(1, 2)), axes=(1, 2)), axes=(1, 2))
    assert isinstance(image, cliper.ndarray)
    want = np.fft.ifftshift(np.fft.ifftn(np.fft.fftshift(cplx, axes=(1, 2)), axes=(1, 2)), axes=(1, 2))
    np.testing.assert_allclose(image.get(), want, rtol=1e-10, atol=1e-12)


def test_bad_arguments_raise_as_numpy_does(cplx):
    with pytest.raises(ValueError, match="norm"):
        fft.fftn(cplx, norm="unitary")
    with pytest.raises(ValueError, match="out of bounds"):
        fft.fft(cplx, axis=3)


def test_matmul_power_norm_vdot_match_numpy(rng):
    a, b = rng.standard_normal((3, 5, 7)), rng.standard_normal((3, 7, 4))
    np.testing.assert_allclose(linalg.matmul(a, b), a @ b, rtol=1e-10, atol=1e-12)
    c = rng.standard_normal((2, 6, 6)) + 1j * rng.standard_normal((2, 6, 6))
    np.testing.assert_allclose(linalg.matrix_power(c, 5), np.linalg.matrix_power(c, 5), rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(linalg.norm(a), np.linalg.norm(a), rtol=1e-12)
    v = rng.standard_normal(31)
    for ord in (1, 3, np.inf):
        np.testing.assert_allclose(linalg.norm(v, ord), np.linalg.norm(v, ord), rtol=1e-12)
    np.testing.assert_allclose(linalg.norm(a, axis=1), np.linalg.norm(a, axis=1), rtol=1e-12)
    np.testing.assert_allclose(linalg.vdot(c, c[::-1]), np.vdot(c, c[::-1]), rtol=1e-12)
    with pytest.raises(ValueError, match="core dimension"):
        linalg.matmul(a, a)
    with pytest.raises(NotImplementedError):
        linalg.matrix_power(c, -1)


@pytest.mark.parametrize("gemm_precision", ["full", "fp32-split", "tf32"])
def test_gemm_precision_reaches_the_products(rng, gemm_precision):
    # float32 products on a shape that is no multiple of a block (37 × 129 · 129 × 70, batched), against float64.
    # Bounds per element, relative to Σ|a||b| (the dot-product bound): full and fp32-split are FP32-accurate,
    # (K + 50)·2⁻²⁴ covers both; tf32 may add the rounding of each operand to 11 bits (2⁻¹⁰ + 2⁻²² per term),
    # where a GPU has the tensor cores (elsewhere it runs in FP32, inside the first bound).
    a = rng.standard_normal((2, 37, 129)).astype(np.float32)
    b = rng.standard_normal((2, 129, 70)).astype(np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    bound = (129 + 50) * 2.0**-24 + (2.0**-10 + 2.0**-22 if gemm_precision == "tf32" else 0.0)
    got = linalg.matmul(a, b, gemm_precision=gemm_precision)
    assert got.dtype == np.float32
    assert np.all(np.abs(got - want) <= bound * scale)
    c = (rng.random((40, 40)) / 40).astype(np.float32)
    power = linalg.matrix_power(c, 7, gemm_precision=gemm_precision)
    want_power = np.linalg.matrix_power(c.astype(np.float64), 7)
    np.testing.assert_allclose(power, want_power, rtol=1e-2 if gemm_precision == "tf32" else 1e-5)


@pytest.mark.parametrize("gemm_precision", ["full", "fp32-split", "tf32"])
def test_complex64_products_follow_gemm_precision(rng, gemm_precision):
    # complex64 products (37 × 129 · 129 × 70, batched) against complex128; on tensor-core GPUs fp32-split and
    # tf32 run them as one real product of twice the depth and width. Bound per element, relative to Σ|a||b|:
    # the complex kernels' 4·(K + 2)·2⁻²⁴ with room for the split (K + 50), plus at tf32 twice a real term's
    # TF32 rounding (each part of a complex term sums two real terms).
    shape_a, shape_b = (2, 37, 129), (2, 129, 70)
    a = (rng.standard_normal(shape_a) + 1j * rng.standard_normal(shape_a)).astype(np.complex64)
    b = (rng.standard_normal(shape_b) + 1j * rng.standard_normal(shape_b)).astype(np.complex64)
    want = a.astype(np.complex128) @ b.astype(np.complex128)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    bound = 4 * (129 + 50) * 2.0**-24 + (2 * (2.0**-10 + 2.0**-22) if gemm_precision == "tf32" else 0.0)
    got = linalg.matmul(a, b, gemm_precision=gemm_precision)
    assert got.dtype == np.complex64
    assert np.all(np.abs(got - want) <= bound * scale)


def test_a_gemm_precision_that_is_not_one_is_refused(rng):
    a = rng.standard_normal((4, 4)).astype(np.float32)
    with pytest.raises(ValueError, match="gemm_precision='half'.*fp32-split"):
        linalg.matmul(a, a, gemm_precision="half")
    with pytest.raises(ValueError, match="gemm_precision='fp16'"):
        linalg.matrix_power(a, 2, gemm_precision="fp16")

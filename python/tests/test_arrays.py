"""Device arrays from Python: numpy in and out, the dtype rules, arithmetic on the device, devices and their
context, threads, and refusals as Python exceptions. Values are compared exactly where the device only moves
or converts them exactly, else within float32's rounding of one operation (rtol 1e-6)."""

import threading

import numpy as np
import pytest

import cliper
from cliper import ndimage


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_round_trip_keeps_the_values_and_type(rng, dtype):
    x = (rng.standard_normal((7, 11, 3)) + (1j if np.dtype(dtype).kind == "c" else 0)).astype(dtype)
    d = cliper.asarray(x)
    assert d.shape == x.shape and d.dtype == x.dtype and d.ndim == 3 and d.size == x.size
    assert np.array_equal(d.get(), x) and np.array_equal(np.asarray(d), x)


@pytest.mark.parametrize("dtype, device", [(np.uint8, np.float64), (np.int16, np.float64), (np.float16, np.float32),
                                            (np.bool_, np.float64), (np.int64, np.float64)])
def test_other_types_are_converted_as_scipy_computes_them(dtype, device):
    x = (np.arange(24) % 7).reshape(4, 6).astype(dtype)
    d = cliper.asarray(x)
    assert d.dtype == device
    assert np.array_equal(d.get(), x.astype(device))


def test_strided_and_fortran_views_upload_their_values(rng):
    x = rng.random((9, 12))
    for view in (x[::2, 1::3], x.T, np.asfortranarray(x)):
        assert np.array_equal(cliper.asarray(view).get(), view)


def test_arithmetic_runs_on_the_device_and_matches_numpy(rng):
    a, b = rng.random((5, 8)), rng.random((5, 8)) + 0.5
    x, y = cliper.asarray(a), cliper.asarray(b)
    for got, want in [(x + y, a + b), (x - 2, a - 2), (3 - x, 3 - a), (x * y, a * b), (x / y, a / b),
                      (2 / y, 2 / b), (x ** 2, a ** 2), (-x, -a), (abs(x - 0.5), abs(a - 0.5)),
                      (x > 0.5, (a > 0.5) * 1.0), (a + y, a + b)]:
        assert isinstance(got, cliper.ndarray)
        np.testing.assert_allclose(got.get(), want, rtol=1e-12)


def test_functions_given_device_arrays_return_device_arrays(rng):
    x = rng.random((20, 30)).astype(np.float32)
    d = cliper.asarray(x)
    smoothed = ndimage.gaussian_filter(d, 2.0)
    assert isinstance(smoothed, cliper.ndarray) and smoothed.dtype == np.float32
    chained = ndimage.median_filter(smoothed, size=3)
    np.testing.assert_allclose(chained.get(), ndimage.median_filter(ndimage.gaussian_filter(x, 2.0), size=3), rtol=1e-6)


def test_devices_and_the_device_context():
    listed = cliper.devices()
    assert listed and sum(d["default"] for d in listed) == 1
    assert {"id", "name", "platform", "kind", "memory", "double"} <= set(listed[0])
    chosen = listed[-1]["id"]
    with cliper.Device(len(listed) - 1) as device:
        assert cliper.get_device().id == chosen == device.id
        assert cliper.asarray(np.ones(3)).device == chosen
    assert cliper.get_device().id == cliper.default_device()
    with pytest.raises(ValueError, match="device 99"):
        cliper.Device(99)


def test_calls_from_several_threads_give_each_its_own_result(rng):
    images = [rng.random((40, 50)) for _ in range(6)]
    results = [None] * len(images)

    def work(i):
        results[i] = ndimage.uniform_filter(images[i], 5)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(images))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for image, result in zip(images, results):
        np.testing.assert_allclose(result, ndimage.uniform_filter(image, 5), rtol=1e-12)


def test_refusals_are_python_exceptions_with_one_line():
    with pytest.raises(TypeError, match="cannot go to a device"):
        cliper.asarray(np.array(["a", "b"]))
    with pytest.raises(TypeError, match="unsupported operand"):
        cliper.asarray(np.ones(3)) + "x"
    with pytest.raises(ValueError) as shapes:
        cliper.asarray(np.ones((3, 4))) + cliper.asarray(np.ones((5, 4)))
    assert "\n" not in str(shapes.value) and "3" in str(shapes.value) and "5" in str(shapes.value)
    with pytest.raises(ValueError, match="no operation named"):
        cliper._cliper.apply("blur", [], {})
    with pytest.raises(ValueError, match="unknown field `bogus`"):
        cliper._cliper.apply("median", [cliper.asarray(np.ones(4))._handle], {"bogus": 1})


def test_every_definition_is_listed_with_its_keys():
    names = {d[0]: d for d in cliper.definitions()}
    assert {"convolve", "median", "fft", "rfft", "fftshift", "cg-sense"} <= set(names)
    assert "footprint" in names["median"][3] and names["median"][2] == "rank-filter"

"""cliper.ndimage.generic_filter against scipy.ndimage.generic_filter computed in the test, on 37×45 and
13×17×11 arrays (float64, float32, int16, bool), every border mode, sizes, footprints, origins and ``axes``.
numpy's reductions run on the device: float64 within 1e-12 relative (another summation order; picks — min, max,
median, ptp — are exact), float32 within 2e-6 relative + 2e-6 absolute (computed in float32, scipy in float64 then
rounded), integers exact after scipy's truncation except where a float32/float64 sum lands within rounding of an
integer (not in these cases: float64 sums of int16 values). Python functions run on the host, as scipy's loop:
exactly scipy's values."""
import numpy as np
import pytest
import scipy.ndimage as sp

import cliper
from cliper import ndimage

MODES = ["reflect", "constant", "nearest", "mirror", "wrap", "grid-constant", "grid-mirror", "grid-wrap"]
FUNCTIONS = [np.sum, np.prod, np.mean, np.average, np.var, np.std, np.min, np.amin, np.max, np.amax, np.ptp, np.median]
PICKS = {np.min, np.amin, np.max, np.amax, np.median, np.ptp}


def data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) > 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-50, 50, shape).astype(dtype)
    return rng.uniform(-1, 1, shape).astype(dtype)


def check(ours, theirs, function, dtype):
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    if np.dtype(dtype) == np.float32:
        np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=2e-6)
    elif np.dtype(dtype) == np.float64 and function not in PICKS:
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)
    else:
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.__name__)
def test_reductions_equal_scipy_in_every_mode(function):
    x = data((37, 45), np.float64)
    for mode in MODES:
        size = (3, 4) if function is not np.prod else 2
        ours = ndimage.generic_filter(x, function, size=size, mode=mode, cval=0.25)
        check(ours, sp.generic_filter(x, function, size=size, mode=mode, cval=0.25), function, np.float64)


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.bool_])
def test_result_types_and_values_follow_scipy(dtype):
    x = data((13, 17, 11), dtype, seed=1)
    for function in (np.mean, np.median, np.std, np.max):
        ours = ndimage.generic_filter(x, function, size=3, mode="nearest")
        check(ours, sp.generic_filter(x, function, size=3, mode="nearest"), function, dtype)


def test_footprints_origins_and_axes():
    x = data((13, 17, 11), np.float64, seed=2)
    fp = np.array([[1, 0, 1], [0, 1, 1]], bool)
    for axes, origin in [((2, 0), [1, 0]), ((0, 2), [0, 1]), ((1, 2), (0, -1)), (None, 0)]:
        footprint = fp if axes is not None else np.ones((2, 3, 2), bool)
        for function in (np.var, np.median, np.min):
            kw = dict(footprint=footprint, origin=origin, axes=axes, mode="wrap")
            check(ndimage.generic_filter(x, function, **kw), sp.generic_filter(x, function, **kw), function, np.float64)


def test_nan_spreads_as_numpy_does():
    x = data((19, 23), np.float64, seed=3)
    x[0, 0] = x[9, 11] = np.nan
    x[18, 5], x[4, 22] = np.inf, -np.inf
    for function in (np.sum, np.min, np.max, np.median, np.ptp, np.mean):
        with np.errstate(invalid="ignore"):
            theirs = sp.generic_filter(x, function, size=3)
        ours = ndimage.generic_filter(x, function, size=3)
        np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs), err_msg=function.__name__)
        finite = ~np.isnan(theirs)
        check(ours[finite], theirs[finite], function, np.float64)


def test_python_functions_run_on_the_host_with_extra_arguments():
    x = data((11, 13), np.float64, seed=4)

    def weighted(window, scale, offset=0.0):
        return scale * window[0] - window[-1] + offset

    kw = dict(size=(3, 4), mode="mirror", extra_arguments=(2.0,), extra_keywords={"offset": 0.5})
    np.testing.assert_array_equal(ndimage.generic_filter(x, weighted, **kw), sp.generic_filter(x, weighted, **kw))
    # numpy's reductions with extra arguments run on the host too (np.percentile's q).
    kw = dict(size=3, extra_arguments=(30,))
    np.testing.assert_array_equal(ndimage.generic_filter(x, np.percentile, **kw), sp.generic_filter(x, np.percentile, **kw))


def test_device_arrays_stay_on_the_device():
    x = data((37, 45), np.float32, seed=5)
    y = ndimage.generic_filter(cliper.asarray(x), np.std, size=5)
    assert isinstance(y, cliper.ndarray)
    check(y.get(), sp.generic_filter(x, np.std, size=5), np.std, np.float32)
    with pytest.raises(TypeError, match="runs on the host"):
        ndimage.generic_filter(cliper.asarray(x), lambda w: w[0], size=3)


def test_outputs_and_refusals():
    x = data((11, 13), np.float64, seed=6)
    out = np.empty((11, 13), np.int32)
    assert ndimage.generic_filter(x * 10, np.max, size=3, output=out) is out
    np.testing.assert_array_equal(out, sp.generic_filter(x * 10, np.max, size=3, output=np.int32))
    with pytest.raises(RuntimeError, match="no footprint or filter size"):
        ndimage.generic_filter(x, np.mean)
    with pytest.raises(TypeError, match="Complex"):
        ndimage.generic_filter(x + 1j, lambda w: w[0], size=3)
    with pytest.warns(UserWarning, match="ignoring size"):
        ndimage.generic_filter(x, np.mean, size=3, footprint=np.ones((3, 3)))


def test_bool_results_truncate_as_scipys_c_cast():
    """scipy writes a real into a bool output as C converts it to an unsigned char (truncation): a mean of 0.4 is
    False. cliper's results once read ``!= 0`` (every smoothed bool image came out nearly all True)."""
    x = np.random.default_rng(7).random((16, 17)) > 0.5
    for name, args in [("uniform_filter", (3,)), ("gaussian_filter", (1,)), ("shift", (0.4,))]:
        ours, theirs = getattr(ndimage, name)(x, *args), getattr(sp, name)(x, *args)
        assert ours.dtype == theirs.dtype == np.bool_
        np.testing.assert_array_equal(ours, theirs, err_msg=name)
    np.testing.assert_array_equal(ndimage.generic_filter(x, np.mean, size=3), sp.generic_filter(x, np.mean, size=3))

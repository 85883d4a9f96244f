"""cliper.ndimage's distance transforms against scipy.ndimage 1.17 computed in the test: distance_transform_edt
with return_indices, distance_transform_cdt and distance_transform_bf — distances (edt/bf euclidean: 1e-12
relative, the rounding of the square root of an exact sum; cdt and bf taxicab/chessboard: exact whole numbers)
and indices (exact, ties included, except where stated), output arrays and refusals."""
import numpy as np
import pytest
import scipy.ndimage

import cliper
from cliper import ndimage


def masks():
    rng = np.random.default_rng(48)
    # Few zeros, so that many elements have several nearest zeros (the tie rules show).
    return {"2d": rng.random((37, 45)) > 0.03, "3d": rng.random((13, 17, 11)) > 0.02}


@pytest.mark.parametrize("name", ["2d", "3d"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, bool])
def test_edt_indices_equal_scipy(name, dtype):
    a = masks()[name].astype(dtype)
    for sampling in [None, (2.0,) * a.ndim, (3.0, 1.0, 0.5)[: a.ndim]]:
        d, i = ndimage.distance_transform_edt(a, sampling=sampling, return_indices=True)
        ed, ei = scipy.ndimage.distance_transform_edt(a, sampling=sampling, return_indices=True)
        assert d.dtype == np.float64 and i.dtype == np.int32 and i.shape == ei.shape
        np.testing.assert_allclose(d, ed, rtol=1e-12 if dtype != np.float32 else 1e-6)
        np.testing.assert_array_equal(i, ei)
        only = ndimage.distance_transform_edt(a, sampling=sampling, return_distances=False, return_indices=True)
        np.testing.assert_array_equal(only, ei)


def test_edt_output_arrays_and_refusals_as_scipy():
    a = masks()["2d"]
    distances = np.zeros(a.shape)
    indices = np.zeros((2,) + a.shape, np.int32)
    assert ndimage.distance_transform_edt(a, return_indices=True, distances=distances, indices=indices) is None
    ed, ei = scipy.ndimage.distance_transform_edt(a, return_indices=True)
    np.testing.assert_allclose(distances, ed, rtol=1e-12)
    np.testing.assert_array_equal(indices, ei)
    with pytest.raises(RuntimeError, match="indices array has wrong shape"):
        ndimage.distance_transform_edt(a, return_indices=True, indices=np.zeros(a.shape, np.int32))
    with pytest.raises(RuntimeError, match="indices array must be int32"):
        ndimage.distance_transform_edt(a, return_indices=True, indices=np.zeros((2,) + a.shape))
    with pytest.raises(RuntimeError, match="return_indices must be True if indices is supplied"):
        ndimage.distance_transform_edt(a, indices=indices)
    with pytest.raises(RuntimeError, match="at least one of return_distances/return_indices"):
        ndimage.distance_transform_edt(a, return_distances=False)
    # No zero at all: scipy's indices (-1 on the first axis, 0 on the others).
    ones = np.ones((3, 4))
    np.testing.assert_array_equal(
        ndimage.distance_transform_edt(ones, return_distances=False, return_indices=True),
        scipy.ndimage.distance_transform_edt(ones, return_distances=False, return_indices=True),
    )


@pytest.mark.parametrize("name", ["2d", "3d"])
@pytest.mark.parametrize("metric", ["chessboard", "taxicab", "cityblock", "manhattan"])
def test_cdt_equals_scipy(name, metric):
    a = masks()[name].astype(np.float32)
    d, i = ndimage.distance_transform_cdt(a, metric=metric, return_indices=True)
    ed, ei = scipy.ndimage.distance_transform_cdt(a, metric=metric, return_indices=True)
    assert d.dtype == ed.dtype == np.int32 and i.dtype == np.int32
    np.testing.assert_array_equal(d, ed)
    np.testing.assert_array_equal(i, ei)


def test_cdt_structures_edge_cases_and_refusals_as_scipy():
    rng = np.random.default_rng(7)
    a = rng.random((23, 19)) > 0.05
    for structure in [
        scipy.ndimage.generate_binary_structure(2, 1),
        np.array([[0, 1, 0], [0, 0, 0], [0, 0, 1]], bool),  # one step up; scipy ignores the second half
        np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1]], bool),  # asymmetric
        np.zeros((3, 3), bool),  # no steps: -1 except at zeros
        np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1]]),  # int64: scipy reads its first 9 bytes as the booleans
        np.ones((3, 3)),  # float64: none of its first 9 bytes is set (scipy's test_distance_transform_cdt05)
    ]:

        d, i = ndimage.distance_transform_cdt(a, metric=structure, return_indices=True)
        ed, ei = scipy.ndimage.distance_transform_cdt(a, metric=structure, return_indices=True)
        np.testing.assert_array_equal(d, ed)
        np.testing.assert_array_equal(i, ei)
    for b in [np.ones((4, 5)), np.zeros((4, 5)), np.ones(7), np.array([1, 0, 1, 1, 1, 0, 1])]:
        d, i = ndimage.distance_transform_cdt(b, return_indices=True)
        ed, ei = scipy.ndimage.distance_transform_cdt(b, return_indices=True)
        np.testing.assert_array_equal(d, ed)
        np.testing.assert_array_equal(i, ei)
    distances = np.zeros(a.shape, np.int32)
    assert ndimage.distance_transform_cdt(a, distances=distances) is None
    np.testing.assert_array_equal(distances, scipy.ndimage.distance_transform_cdt(a))
    with pytest.raises(ValueError, match="invalid metric provided"):
        ndimage.distance_transform_cdt(a, metric="euclidean")
    with pytest.raises(ValueError, match="metric sizes must be equal to 3"):
        ndimage.distance_transform_cdt(a, metric=np.ones((3, 5)))
    with pytest.raises(ValueError, match="distances must be of int32 type"):
        ndimage.distance_transform_cdt(a, distances=np.zeros(a.shape))


def test_results_stay_on_the_device():
    a = masks()["2d"]
    d, i = ndimage.distance_transform_edt(cliper.asarray(a.astype(np.float32)), return_indices=True)
    assert isinstance(d, cliper.ndarray) and isinstance(i, cliper.ndarray)
    np.testing.assert_array_equal(i.get(), scipy.ndimage.distance_transform_edt(a, return_indices=True)[1])


@pytest.mark.parametrize("name", ["2d", "3d"])
@pytest.mark.parametrize("metric", ["euclidean", "taxicab", "chessboard"])
def test_bf_equals_scipy(name, metric):
    a = masks()[name]
    if name == "3d":
        a = a[:, :9, :7]  # brute force: elements² steps
    for sampling in [None, (2.0, 0.7, 1.5)[: a.ndim]]:
        d, i = ndimage.distance_transform_bf(a, metric=metric, sampling=sampling, return_indices=True)
        ed, ei = scipy.ndimage.distance_transform_bf(a, metric=metric, sampling=sampling, return_indices=True)
        assert d.dtype == ed.dtype and i.dtype == np.int32
        # Euclidean: the same float64 sums of squares and square root as scipy's loop (1e-15: one rounding).
        np.testing.assert_allclose(d, ed, rtol=1e-15 if metric == "euclidean" else 0)
        np.testing.assert_array_equal(i, ei)


def test_bf_edge_cases_and_refusals_as_scipy():
    for b in [np.ones((3, 4)), np.zeros((3, 4)), np.array([1, 0, 1, 1, 0, 1])]:
        for metric in ["euclidean", "cityblock"]:
            d, i = ndimage.distance_transform_bf(b, metric=metric, return_indices=True)
            ed, ei = scipy.ndimage.distance_transform_bf(b, metric=metric, return_indices=True)
            np.testing.assert_array_equal(d, ed)
            np.testing.assert_array_equal(i, ei)
    a = masks()["2d"]
    distances = np.zeros(a.shape, np.uint32)
    assert ndimage.distance_transform_bf(a, metric="taxicab", distances=distances) is None
    np.testing.assert_array_equal(distances, scipy.ndimage.distance_transform_bf(a, metric="taxicab"))
    with pytest.raises(RuntimeError, match="distance metric not supported"):
        ndimage.distance_transform_bf(a, metric="minkowski")
    with pytest.raises(RuntimeError, match="distances array must be uint32"):
        ndimage.distance_transform_bf(a, metric="chessboard", distances=np.zeros(a.shape))

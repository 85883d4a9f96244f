"""cliper.morphology against scikit-image 0.26 computed in the test: exact equality (0/1 masks and labels)."""
import warnings

import numpy as np
import pytest
import skimage.morphology

import cliper
from cliper import morphology


def masks():
    rng = np.random.default_rng(48)
    return {"2d": rng.random((37, 45)) > 0.62, "3d": rng.random((13, 17, 11)) > 0.7}


@pytest.mark.parametrize("name", ["2d", "3d"])
@pytest.mark.parametrize("max_size", [1, 3, 8])
def test_remove_small_objects_equals_skimage(name, max_size):
    a = masks()[name]
    removed = 0
    for connectivity in range(1, a.ndim + 1):
        expected = skimage.morphology.remove_small_objects(a, max_size=max_size, connectivity=connectivity)
        ours = morphology.remove_small_objects(a, max_size=max_size, connectivity=connectivity)
        assert ours.dtype == expected.dtype == bool
        np.testing.assert_array_equal(ours, expected)
        removed += int((a & ~expected).sum())
    assert removed > 0  # the cases remove something


@pytest.mark.parametrize("name", ["2d", "3d"])
def test_remove_small_holes_equals_skimage(name):
    a = ~masks()[name]
    filled = 0
    for connectivity in range(1, a.ndim + 1):
        expected = skimage.morphology.remove_small_holes(a, max_size=6, connectivity=connectivity)
        ours = morphology.remove_small_holes(a, max_size=6, connectivity=connectivity)
        assert ours.dtype == bool
        np.testing.assert_array_equal(ours, expected)
        filled += int((expected & ~a).sum())
    assert filled > 0


def test_labelled_input_keeps_its_type_and_labels():
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 40, size=(21, 19)).astype(np.int32)
    expected = skimage.morphology.remove_small_objects(labels, max_size=9)
    ours = morphology.remove_small_objects(labels, max_size=9)
    assert ours.dtype == np.int32
    np.testing.assert_array_equal(ours, expected)
    out = np.empty_like(labels)
    assert morphology.remove_small_objects(labels, max_size=9, out=out) is out
    np.testing.assert_array_equal(out, expected)


def test_device_arrays_and_deprecated_names_as_skimage():
    a = masks()["2d"]
    with pytest.warns(FutureWarning):
        ours = morphology.remove_small_objects(a, min_size=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = skimage.morphology.remove_small_objects(a, min_size=5)
    np.testing.assert_array_equal(ours, expected)
    d = morphology.remove_small_objects(cliper.asarray(a), max_size=4)
    assert isinstance(d, cliper.ndarray)  # a device array in, a device array out
    np.testing.assert_array_equal(d.get(), skimage.morphology.remove_small_objects(a, max_size=4))


def test_refusals_as_skimage():
    with pytest.raises(TypeError, match="bool or integer"):
        morphology.remove_small_objects(np.zeros((4, 4), np.float32))
    with pytest.raises(ValueError, match="Negative value labels"):
        morphology.remove_small_objects(np.array([[0, -1], [2, 2]]))
    with pytest.warns(UserWarning, match="Only one label"):
        morphology.remove_small_objects(np.array([[0, 1], [1, 1]]), max_size=1)

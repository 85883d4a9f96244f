"""cliper.morphology.skeletonize against scikit-image 0.26 (the reference computed here). Skeletons are bool, so
cliper's must EQUAL scikit-image's element for element (tolerance 0): 2-D masks of 37x45 and 64x53 (random blobs, a
ring, objects touching the edges) by Zhang's thinning and by Lee's, 3-D masks of 13x17x11 and 24^3 by Lee's, inputs
of other types and values (int, float with NaN: astype(bool)), a device array in and out, and scikit-image's
refusals."""

import numpy as np
import pytest
import skimage.morphology as sk
from scipy import ndimage as ndi

import cliper
from cliper import morphology

rng = np.random.default_rng(4848)


def _blobs(shape, sigma, level=0.5):
    return ndi.gaussian_filter(rng.random(shape), sigma) > level


def _ring():
    yy, xx = np.mgrid[0:37, 0:45]
    return np.abs(np.hypot(yy - 18.3, xx - 22.1) - 11) < 3.2


def _edges():
    yy, xx = np.mgrid[0:64, 0:53]
    return (yy < 5) | (xx > 47) | ((yy > 30) & (xx < 11)) | _blobs((64, 53), 2.5)


MASKS2 = {"blobs_37x45": lambda: _blobs((37, 45), 2.0), "ring_37x45": _ring, "edges_64x53": _edges}
MASKS3 = {"blobs_13x17x11": lambda: _blobs((13, 17, 11), 1.5), "blob_24": lambda: _blobs((24, 24, 24), 3.0)}


@pytest.mark.parametrize("name", sorted(MASKS2))
@pytest.mark.parametrize("method", [None, "zhang", "lee"])
def test_2d_equals_skimage(name, method):
    mask = MASKS2[name]()
    want = sk.skeletonize(mask, method=method)
    got = morphology.skeletonize(mask, method=method)
    assert got.dtype == bool and got.shape == mask.shape
    assert want.sum() < mask.sum()  # it thinned: the comparison can fail
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", sorted(MASKS3))
def test_3d_equals_skimage(name):
    mask = MASKS3[name]()
    want = sk.skeletonize(mask)
    assert want.sum() < mask.sum()
    np.testing.assert_array_equal(morphology.skeletonize(mask), want)
    np.testing.assert_array_equal(morphology.skeletonize(mask, method="lee"), want)


def test_values_other_than_bool_are_their_masks():
    mask = MASKS2["blobs_37x45"]()
    labels = (mask * rng.integers(1, 200, mask.shape)).astype(np.int16)
    np.testing.assert_array_equal(morphology.skeletonize(labels), sk.skeletonize(labels))
    floats = np.where(mask, rng.normal(0, 3, mask.shape), 0.0).astype(np.float32)
    floats[mask & (rng.random(mask.shape) < 0.2)] = np.nan
    np.testing.assert_array_equal(morphology.skeletonize(floats), sk.skeletonize(floats))


def test_device_array_stays_on_the_device():
    mask = MASKS3["blobs_13x17x11"]()
    got = morphology.skeletonize(cliper.asarray(mask.astype(np.float32)))
    assert isinstance(got, cliper.ndarray)
    np.testing.assert_array_equal(got.get().astype(bool), sk.skeletonize(mask))


def test_empty_and_blank_images():
    for shape in [(0, 5), (9, 8), (5, 6, 4)]:
        blank = np.zeros(shape, bool)
        np.testing.assert_array_equal(morphology.skeletonize(blank), sk.skeletonize(blank))


@pytest.mark.parametrize("shape, method", [((13, 17, 11), "zhang"), ((7,), None), ((2, 3, 4, 5), None),
                                           ((9, 8), "medial")])
def test_refusals_as_skimage(shape, method):
    image = np.ones(shape, bool)
    with pytest.raises(ValueError) as want:
        sk.skeletonize(image, method=method)
    with pytest.raises(ValueError) as got:
        morphology.skeletonize(image, method=method)
    assert str(got.value) == str(want.value)

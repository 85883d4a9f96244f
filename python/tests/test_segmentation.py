"""cliper.segmentation.watershed against skimage.segmentation.watershed (0.26) and cliper.ndimage.watershed_ift
against scipy.ndimage.watershed_ift (1.17), both computed here: labels, so exact equality (tolerance 0), dtype
included. Images are quantised to few levels so that plateaus and ties — decided by the references' queue order —
are everywhere; shapes 37×45 and 13×17×11."""

import numpy as np
import pytest
import scipy.ndimage as ndi
import skimage.segmentation as skseg

import cliper
from cliper import ndimage, segmentation

rng = np.random.default_rng(2048)


def seeds(shape, count, dtype=np.int32, negative=0):
    markers = np.zeros(shape, dtype)
    labels = np.arange(1, count + 1)
    labels[count - negative:] *= -1
    markers.flat[rng.choice(markers.size, count, replace=False)] = labels
    return markers


IMG2 = np.round(ndi.uniform_filter(rng.random((37, 45)), 3) * 12) % 5
IMG3 = np.floor(rng.random((13, 17, 11)) * 4)
MK2 = seeds(IMG2.shape, 9, negative=1)
MK3 = seeds(IMG3.shape, 7, dtype=np.int64)
MASK2 = rng.random(IMG2.shape) < 0.85
MASK3 = rng.random(IMG3.shape) < 0.8

CASES = [
    ({}, "plain"),
    ({"connectivity": 2}, "connectivity 2"),
    ({"mask": True}, "mask"),
    ({"compactness": 0.01}, "compact"),
    ({"watershed_line": True}, "line"),
    ({"connectivity": 2, "mask": True, "watershed_line": True}, "line, mask, connectivity 2"),
    ({"compactness": 0.5, "watershed_line": True}, "compact line"),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kwargs,what", CASES)
@pytest.mark.parametrize("image,markers,mask", [(IMG2, MK2, MASK2), (IMG3, MK3, MASK3)], ids=["2d", "3d"])
def test_watershed_equals_skimage(image, markers, mask, kwargs, what, dtype):
    kwargs = dict(kwargs)
    if kwargs.pop("mask", False):
        kwargs["mask"] = mask
    image = image.astype(dtype)
    want = skseg.watershed(image, markers, **kwargs)
    got = segmentation.watershed(image, markers, **kwargs)
    assert got.dtype == want.dtype, what
    np.testing.assert_array_equal(got, want, err_msg=what)


@pytest.mark.parametrize("connectivity", [1, 2, 3])
def test_watershed_markers_from_minima(connectivity):
    for image, mask in [(IMG2, MASK2), (IMG3, MASK3)]:
        c = min(connectivity, image.ndim)
        for m in (None, mask):
            want = skseg.watershed(image, connectivity=c, mask=m)
            got = segmentation.watershed(image, connectivity=c, mask=m)
            assert got.dtype == want.dtype == np.int32
            np.testing.assert_array_equal(got, want)


def test_watershed_a_number_of_markers():
    for m in (None, MASK2):
        want = skseg.watershed(IMG2, 12, mask=m)
        got = segmentation.watershed(IMG2, 12, mask=m)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_watershed_footprint_and_offset():
    wide = np.ones((3, 5), bool)
    wide[0, 0] = False
    np.testing.assert_array_equal(segmentation.watershed(IMG2, MK2, connectivity=wide),
                                  skseg.watershed(IMG2, MK2, connectivity=wide))
    box = np.ones((3, 3), bool)
    np.testing.assert_array_equal(segmentation.watershed(IMG2, MK2, connectivity=box, offset=(1, 2)),
                                  skseg.watershed(IMG2, MK2, connectivity=box, offset=(1, 2)))


def test_watershed_device_arrays_in_device_array_out():
    image = cliper.asarray(IMG3.astype(np.float32))
    got = segmentation.watershed(image, MK3, mask=MASK3)
    assert isinstance(got, cliper.ndarray)
    np.testing.assert_array_equal(got.get(), skseg.watershed(IMG3.astype(np.float32), MK3, mask=MASK3))


def test_watershed_refusals_as_skimage():
    with pytest.raises(ValueError, match="must have same shape"):
        segmentation.watershed(IMG2, MK3)
    with pytest.raises(ValueError, match="must have same shape"):
        segmentation.watershed(IMG2, MK2, mask=MASK3)
    with pytest.raises(ValueError, match="unambiguous center"):
        segmentation.watershed(IMG2, MK2, connectivity=np.ones((3, 4), bool))
    with pytest.raises(ValueError, match="same as image"):
        segmentation.watershed(IMG2, MK2, connectivity=np.ones((3, 3, 3), bool))


U8 = (np.round(ndi.uniform_filter(rng.random((37, 45)), 3) * 12) * 20).astype(np.uint8)
U16 = (np.floor(rng.random((13, 17, 11)) * 5) * 1000).astype(np.uint16)


@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("marker_type", [np.int8, np.int16, np.int32, np.int64])
def test_watershed_ift_equals_scipy(marker_type, full):
    for image in (U8, U16):
        markers = seeds(image.shape, 8, dtype=marker_type, negative=2)
        structure = np.ones((3,) * image.ndim, bool) if full else None
        want = ndi.watershed_ift(image, markers, structure=structure)
        got = ndimage.watershed_ift(image, markers, structure=structure)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_watershed_ift_output_and_device():
    markers = seeds(U8.shape, 5, negative=1)
    out = np.zeros(U8.shape, np.int64)
    assert ndimage.watershed_ift(U8, markers, output=out) is out
    np.testing.assert_array_equal(out, ndi.watershed_ift(U8, markers))
    got = ndimage.watershed_ift(cliper.asarray(U8.astype(np.float32)), markers)
    assert isinstance(got, cliper.ndarray)
    np.testing.assert_array_equal(got.get(), ndi.watershed_ift(U8, markers))


def test_watershed_ift_refusals_as_scipy():
    markers = seeds(U8.shape, 3)
    with pytest.raises(TypeError):
        ndimage.watershed_ift(U8.astype(np.float64), markers)
    with pytest.raises(RuntimeError, match="integer type"):
        ndimage.watershed_ift(U8, markers.astype(np.uint8))
    with pytest.raises(RuntimeError, match="equal shape"):
        ndimage.watershed_ift(U8, markers[:-1])
    with pytest.raises(RuntimeError, match="equal to 3"):
        ndimage.watershed_ift(U8, markers, structure=np.ones((5, 5), bool))
    with pytest.raises(ValueError, match="65535"):
        ndimage.watershed_ift(cliper.asarray(np.full(U8.shape, 0.5)), markers)


def test_watershed_edge_cases_as_skimage():
    """NaN (compared as skimage's C comparisons compare it), a constant image (no minimum), no markers at all,
    connectivity below 1 and above the rank, 1-D."""
    image = IMG2.copy()
    image[rng.random(image.shape) < 0.05] = np.nan
    for kwargs in ({}, {"watershed_line": True}, {"compactness": 0.1}):
        np.testing.assert_array_equal(segmentation.watershed(image, MK2, **kwargs),
                                      skseg.watershed(image, MK2, **kwargs))
    np.testing.assert_array_equal(segmentation.watershed(image), skseg.watershed(image))
    constant = np.ones((5, 6))
    np.testing.assert_array_equal(segmentation.watershed(constant), skseg.watershed(constant))
    np.testing.assert_array_equal(segmentation.watershed(IMG2, np.zeros_like(MK2)), np.zeros_like(MK2))
    for c in (0, 5):
        np.testing.assert_array_equal(segmentation.watershed(IMG2, MK2, connectivity=c),
                                      skseg.watershed(IMG2, MK2, connectivity=c))
    line, seeds1 = IMG2[3], MK2[3] + (np.arange(45) == 40)
    np.testing.assert_array_equal(segmentation.watershed(line, seeds1), skseg.watershed(line, seeds1))
    np.testing.assert_array_equal(segmentation.watershed(line), skseg.watershed(line))

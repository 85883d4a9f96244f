"""cliper.filters against scikit-image 0.26 (the reference computed here): Otsu, Yen, triangle and multi-Otsu
thresholds of float32, float64, uint8, uint16, int16 and int64 images of odd shapes. Each threshold is a bin
centre that cliper computes in the image's type as numpy does, so it must EQUAL scikit-image's (a wrong bin is off
by a whole bin width), in the same numpy type. Li's threshold (no bins) must lie within 16 ε · max|x| of
scikit-image's (numpy's pairwise sums in the image's type against cliper's in double), in the same type, and split
the image as scikit-image's does."""

import numpy as np
import pytest
from skimage import filters as sk

import cliper
from cliper import filters

rng = np.random.default_rng(4848)


def _bimodal(shape, dtype, low, high, spread):
    values = np.where(rng.random(shape) < 0.35, high, low) + rng.normal(0, spread, shape)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        values = np.clip(np.rint(values), info.min, info.max)
    return values.astype(dtype)


IMAGES = {
    "f32_37x45": lambda: _bimodal((37, 45), np.float32, 0.1, 0.7, 0.1),
    "f64_13x17x11": lambda: _bimodal((13, 17, 11), np.float64, -300.0, 400.0, 90.0),
    "u8_37x45": lambda: _bimodal((37, 45), np.uint8, 50, 180, 20),
    "u16_41x23": lambda: _bimodal((41, 23), np.uint16, 1200, 3100, 300),
    "i16_19x21": lambda: _bimodal((19, 21), np.int16, -800, 600, 150),
    "i64_17x29": lambda: _bimodal((17, 29), np.int64, 10, 90, 12),
}


@pytest.mark.parametrize("name", sorted(IMAGES))
@pytest.mark.parametrize("method", ["otsu", "yen", "triangle"])
def test_single_thresholds_equal_skimage(name, method):
    image = IMAGES[name]()
    for nbins in (256, 37):
        got = getattr(filters, f"threshold_{method}")(image, nbins=nbins)
        want = getattr(sk, f"threshold_{method}")(image, nbins=nbins)
        assert type(got) is type(want), (name, method, nbins, type(got), type(want))
        assert got == want, (name, method, nbins, got, want)


# Four classes search every triple of bin boundaries (scikit-image's exhaustive search, as cliper's): on the
# integer images' thousands of one-integer bins that is minutes even for scikit-image, so they are asked for two
# and three classes; the 256-bin images for four too.
MULTIOTSU_CASES = [(name, classes) for name in sorted(IMAGES) for classes in (2, 3, 4)
                   if classes < 4 or name.startswith(("f32", "f64", "u8"))]


@pytest.mark.parametrize("name,classes", MULTIOTSU_CASES)
def test_multiotsu_equals_skimage(name, classes):
    image = IMAGES[name]()
    got = filters.threshold_multiotsu(image, classes=classes)
    want = sk.threshold_multiotsu(image, classes=classes)
    assert got.dtype == want.dtype and np.array_equal(got, want), (got, want)


def test_one_value_images_answer_the_value_as_skimage():
    for image in (np.full((5, 7), 3, np.uint8), np.full((4, 3), 0.25, np.float32)):
        for method in ("otsu", "triangle", "yen"):
            got = getattr(filters, f"threshold_{method}")(image)
            want = getattr(sk, f"threshold_{method}")(image)
            assert got == want and type(got) is type(want), (method, image.dtype, got, want)


def test_refusals_name_the_problem():
    image = np.linspace(0, 1, 30).reshape(5, 6)
    image[2, 3] = np.nan
    with pytest.raises(ValueError):
        sk.threshold_otsu(image)
    with pytest.raises(ValueError, match="NaN"):
        filters.threshold_otsu(image)
    two = np.array([[1, 1, 4], [4, 4, 1]], dtype=np.uint8)
    with pytest.raises(ValueError):
        sk.threshold_multiotsu(two, classes=3)
    with pytest.raises(ValueError, match="only 2 different values"):
        filters.threshold_multiotsu(two, classes=3)
    with pytest.raises(NotImplementedError, match="hist="):
        filters.threshold_otsu(hist=np.ones(5))


@pytest.mark.parametrize("name", sorted(IMAGES))
def test_li_equals_skimage_within_rounding_and_splits_alike(name):
    image = IMAGES[name]()
    got = filters.threshold_li(image)
    want = sk.threshold_li(image)
    assert type(got) is type(want), (name, type(got), type(want))
    epsilon = np.finfo(image.dtype if image.dtype.kind == "f" else np.float64).eps
    assert abs(float(got) - float(want)) <= 16 * epsilon * float(np.abs(image).max()), (name, got, want)
    assert np.array_equal(image > got, image > want), name


def test_li_leaves_nan_out_and_answers_skimages_special_cases():
    image = IMAGES["f32_37x45"]()
    image[3, 4] = np.nan
    image[5, 6] = np.inf
    got, want = filters.threshold_li(image), sk.threshold_li(image)
    assert type(got) is type(want) and abs(got - want) <= 16 * np.finfo(np.float32).eps * 2, (got, want)
    for special in (np.array([np.nan, np.nan]), np.array([np.nan, 2.5, 2.5], np.float32),
                    np.array([np.inf, -np.inf, np.nan]), np.full((2, 3), 7, np.uint8)):
        got, want = filters.threshold_li(special), sk.threshold_li(special)
        assert type(got) is type(want) and (got == want or (np.isnan(got) and np.isnan(want))), (special, got, want)
    with pytest.raises(NotImplementedError, match="initial_guess="):
        filters.threshold_li(image, initial_guess=0.5)


def test_device_arrays_give_skimages_thresholds_in_their_type():
    image = IMAGES["f32_37x45"]()
    on_device = cliper.asarray(image)
    for method in ("otsu", "yen", "triangle"):
        got, want = getattr(filters, f"threshold_{method}")(on_device), getattr(sk, f"threshold_{method}")(image)
        assert got == want and got.dtype == want.dtype, (method, got, want)
    got, want = filters.threshold_li(on_device), sk.threshold_li(image)
    assert abs(got - want) <= 16 * np.finfo(np.float32).eps and got.dtype == want.dtype, (got, want)
    assert filters.threshold_multiotsu(on_device).tolist() == sk.threshold_multiotsu(image).tolist()

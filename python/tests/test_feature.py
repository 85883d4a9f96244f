"""cliper.feature.peak_local_max against scikit-image 0.26 (the reference computed here): random smoothed images
quantised to 1/8 steps (plateaus and equal peaks happen) of 37×45, 13×17×11 and 200 elements (1-D), float32,
float64 and uint8, with skimage's parameters in many combinations, labels included. The result is integer
coordinates in skimage's order, so it must EQUAL skimage's (no tolerance), as an int64 array of the same shape."""

import numpy as np
import pytest
import skimage.feature as sk
from scipy import ndimage as ndi

import cliper
from cliper import feature

rng = np.random.default_rng(4849)


def _quantised(shape, sigma, dtype):
    smooth = ndi.gaussian_filter(rng.random(shape), sigma)
    smooth = (smooth - smooth.min()) / (smooth.max() - smooth.min())
    if np.dtype(dtype).kind == "u":
        return np.round(smooth * 30).astype(dtype)
    return (np.round(smooth * 40) / 8).astype(dtype)


IMAGES = {
    "f64_37x45": _quantised((37, 45), 1.5, np.float64),
    "f32_37x45": _quantised((37, 45), 1.2, np.float32),
    "u8_37x45": _quantised((37, 45), 1.5, np.uint8),
    "f32_13x17x11": _quantised((13, 17, 11), 1.0, np.float32),
    "f64_200": _quantised((200,), 2.0, np.float64),
}

PARAMS = [
    {},
    {"min_distance": 3},
    {"min_distance": 2, "exclude_border": False, "threshold_rel": 0.4},
    {"min_distance": 1, "exclude_border": 3, "threshold_abs": 2.0},
    {"min_distance": 4, "p_norm": 2, "num_peaks": 7, "exclude_border": 0},
    {"min_distance": 3, "p_norm": 1, "exclude_border": False},
    {"min_distance": 0, "threshold_rel": 0.8},
]


@pytest.mark.parametrize("image", IMAGES)
@pytest.mark.parametrize("params", PARAMS, ids=lambda p: "-".join(f"{k}={v}" for k, v in p.items()) or "default")
def test_peak_local_max_equals_skimage(image, params):
    x = IMAGES[image]
    with pytest.warns(RuntimeWarning) if params.get("min_distance") == 0 else _nothing():
        ours = feature.peak_local_max(x, **params)
    with pytest.warns(RuntimeWarning) if params.get("min_distance") == 0 else _nothing():
        theirs = sk.peak_local_max(x, **params)
    assert ours.dtype == np.int64 and ours.shape == theirs.shape
    assert np.array_equal(ours, theirs)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _labels2():
    labels = np.zeros((37, 45), np.int32)
    labels[2:18, 3:20] = 1
    labels[20:35, 5:40] = 3
    labels[3:16, 25:43] = 4
    labels[10:16, 25:31] = 0
    return labels


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("params", [
    {"min_distance": 2},
    {"min_distance": 1, "num_peaks_per_label": 2, "exclude_border": False},
    {"min_distance": 3, "num_peaks": 3, "exclude_border": (1, 4)},
    {"min_distance": 2, "footprint": np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]]), "threshold_rel": 0.3},
], ids=["md2", "per_label", "num_peaks", "footprint"])
def test_labels_equal_skimage(dtype, params):
    x = IMAGES["f64_37x45"].astype(dtype)
    labels = _labels2()
    ours = feature.peak_local_max(x, labels=labels, **params)
    theirs = sk.peak_local_max(x, labels=labels, **params)
    assert ours.dtype == np.int64 and np.array_equal(ours, theirs)


def test_edge_cases_as_skimage():
    flat = np.full((9, 11), 3.0)
    assert np.array_equal(feature.peak_local_max(flat), sk.peak_local_max(flat))  # no peak in a flat image
    with_nan = IMAGES["f64_37x45"].copy()
    with_nan[5, 5] = np.nan
    for kw in ({}, {"threshold_abs": 1.0, "min_distance": 2}):
        assert np.array_equal(feature.peak_local_max(with_nan, **kw), sk.peak_local_max(with_nan, **kw))
    # Labels all within the border: skimage returns an empty (0, 2) array whatever the image's axes.
    labels = np.zeros((13, 17, 11), np.int32)
    labels[0] = 1
    x = IMAGES["f32_13x17x11"]
    ours, theirs = feature.peak_local_max(x, labels=labels), sk.peak_local_max(x, labels=labels)
    assert ours.shape == theirs.shape == (0, 2)
    # A device array in: the same coordinates (skimage returns numpy arrays).
    on_device = cliper.asarray(IMAGES["f32_37x45"])
    assert np.array_equal(feature.peak_local_max(on_device, min_distance=2),
                          sk.peak_local_max(IMAGES["f32_37x45"], min_distance=2))


def test_errors_as_skimage():
    x = IMAGES["f64_37x45"]
    with pytest.raises(ValueError, match="negative"):
        feature.peak_local_max(x, exclude_border=-1)
    with pytest.raises(ValueError, match="same length"):
        feature.peak_local_max(x, exclude_border=(1, 2, 3))
    with pytest.raises(TypeError):
        feature.peak_local_max(x, exclude_border=1.5)
    with pytest.raises(TypeError):
        feature.peak_local_max(x, labels=_labels2().astype(float))
    with pytest.raises(ValueError, match="p_norm"):
        feature.peak_local_max(x, p_norm=0.5)

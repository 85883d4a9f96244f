"""cliper.ndimage's measurements against scipy.ndimage computed in the test, on labelled blobs of 37×45 and
13×17×11 with gaps in the numbering (index arrays that name an absent label and label 0), float64, float32 and
integer images, scalar and array indexes, ``labels=None`` and ``index=None``. Tolerances: sums and what derives
from them 1e-12 relative for float64 images (both sum in float64, in another order); float32 scalar sums 1e-6
(scipy sums one region in float32, cliper in float64); extrema, positions, boxes, medians and histograms exact;
result types equal scipy's."""
import numpy as np
import pytest
import scipy.ndimage as sp

from cliper import ndimage


def case(shape, seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    labels, n = sp.label(sp.gaussian_filter(rng.random(shape), 1.5) > 0.52)
    labels[labels == 2] = 0  # a gap: label 2 is absent
    image = rng.normal(10.0, 3.0, shape)
    if np.dtype(dtype).kind in "iu":
        image = np.round(image * 10).astype(dtype)
    else:
        image = image.astype(dtype)
    return image, labels, n


SHAPES = [((37, 45), 1), ((13, 17, 11), 2)]


def same(ours, theirs, rtol):
    assert type(ours) is type(theirs), (type(ours), type(theirs))
    if isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            same(a, b, rtol)
        return
    if isinstance(theirs, np.ndarray):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=0, equal_nan=True)


@pytest.mark.parametrize("shape,seed", SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16])
@pytest.mark.parametrize(
    "name",
    ["sum_labels", "sum", "mean", "variance", "standard_deviation", "minimum", "maximum", "median",
     "minimum_position", "maximum_position", "extrema", "center_of_mass"],
)
def test_each_measurement_equals_scipy(shape, seed, dtype, name):
    import warnings

    image, labels, n = case(shape, seed, dtype)
    exact = name in ("minimum", "maximum", "median", "minimum_position", "maximum_position", "extrema")
    ours_f, theirs_f = getattr(ndimage, name), getattr(sp, name)
    index = np.arange(0, n + 2)  # label 0, the absent 2, and n + 1 past the last
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy's mean of an absent label
        for args in [(labels, index), (labels, [3, 1]), (labels, 3), (labels, None), (None, None)]:
            if args[1] is not None and not np.isscalar(args[1]) and name in ("median",) and 2 in list(args[1]):
                args = (labels, [k for k in args[1] if k != 2 and k <= n])  # scipy's median of an absent label
            theirs = theirs_f(image, *args)
            ours = ours_f(image, *args)
            scalar_sum = name in ("sum", "sum_labels") and dtype == np.float32 and not isinstance(theirs, np.ndarray)
            same(ours, theirs, 0 if exact else (1e-6 if scalar_sum or dtype == np.float32 else 1e-12))


def test_find_objects_equals_scipy():
    for shape, seed in SHAPES:
        _, labels, n = case(shape, seed)
        assert ndimage.find_objects(labels) == sp.find_objects(labels)
        assert ndimage.find_objects(labels, max_label=n + 3) == sp.find_objects(labels, max_label=n + 3)
    with pytest.raises(TypeError):
        ndimage.find_objects(np.ones((3, 3)))


def test_histogram_labeled_comprehension_and_value_indices_equal_scipy():
    image, labels, n = case((37, 45), 1)
    index = [1, 2, 3]
    ours = ndimage.histogram(image, 0, 20, 7, labels, index)
    theirs = sp.histogram(image, 0, 20, 7, labels, index)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert (a is None and b is None) or np.array_equal(a, b)
    for func in (np.mean, np.std, np.max, len, lambda v: np.percentile(v, 30)):
        a = ndimage.labeled_comprehension(image, labels, np.arange(n + 2), func, np.float64, -1.0)
        b = sp.labeled_comprehension(image, labels, np.arange(n + 2), func, np.float64, -1.0)
        np.testing.assert_allclose(a, b, rtol=1e-12)
    both = ndimage.labeled_comprehension(image, labels, 3, lambda v, p: p.min(), int, 0, pass_positions=True)
    assert both == sp.labeled_comprehension(image, labels, 3, lambda v, p: p.min(), int, 0, pass_positions=True)
    ours, theirs = ndimage.value_indices(labels, ignore_value=0), sp.value_indices(labels, ignore_value=0)
    assert ours.keys() == theirs.keys()
    for k in theirs:
        assert all(np.array_equal(a, b) for a, b in zip(ours[k], theirs[k]))


def test_labels_scipy_renumbers_negative_and_fractional():
    rng = np.random.default_rng(3)
    image = rng.random((9, 11))
    labels = rng.choice([-3.0, 0.5, 7.25, 1e9], size=(9, 11))
    index = [-3.0, 7.25, 1e9, 4.0]
    np.testing.assert_allclose(ndimage.mean(image, labels, index), sp.mean(image, labels, index), rtol=1e-12)
    assert ndimage.maximum_position(image, labels, index[:3]) == sp.maximum_position(image, labels, index[:3])


def test_device_arrays_are_measured_too():
    import cliper

    image, labels, n = case((37, 45), 1)
    on_device = cliper.asarray(image)
    np.testing.assert_allclose(
        ndimage.mean(on_device, labels, [1, 3]), sp.mean(image, labels, [1, 3]), rtol=1e-12
    )


REGIONPROPS = ["label", "area", "num_pixels", "bbox", "centroid", "centroid_weighted", "intensity_mean",
               "intensity_min", "intensity_max", "intensity_std", "equivalent_diameter_area", "inertia_tensor",
               "inertia_tensor_eigvals", "extent", "moments", "moments_central", "moments_normalized",
               "moments_weighted", "moments_weighted_central", "moments_weighted_normalized"]


@pytest.mark.parametrize("shape,seed", SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_regionprops_table_equals_scikit_image(shape, seed, dtype):
    """Every property cliper computes, columns, names and types as skimage 0.26's; 1e-9 relative (closed-form
    eigenvalues against LAPACK; float32 images: both measure in float64 from the same float32 values, 1e-6), and
    1e-12 absolute, the moments within that relative tolerance of their kind's largest value; NaN where skimage
    has NaN."""
    import skimage.measure

    image, labels, n = case(shape, seed, dtype)
    flat = ["eccentricity", "orientation", "moments_hu", "moments_weighted_hu"]
    properties = REGIONPROPS + (flat if len(shape) == 2 else [])
    ours = cliper_measure().regionprops_table(labels, image, properties=properties)
    theirs = skimage.measure.regionprops_table(labels, image, properties=properties)
    assert list(ours) == list(theirs)
    rtol = 1e-9 if dtype == np.float64 else 1e-6
    for k in theirs:
        assert ours[k].dtype == theirs[k].dtype, k
        # A moment's rounding is relative to the largest moment of its kind (central moments of order 1 are 0
        # up to skimage's own rounding, 4e-12 here), not to each value.
        prop = k.rsplit("-", 2 if len(shape) == 2 else 3)[0] if k.startswith("moments") else k
        scale = max(np.nanmax(np.abs(theirs[c])) for c in theirs if c.startswith(prop + "-")) if prop != k else 0
        np.testing.assert_allclose(ours[k], theirs[k], rtol=rtol, atol=max(1e-12, rtol * scale), err_msg=k)


def cliper_measure():
    from cliper import measure

    return measure


def test_regionprops_table_refusals_and_empty_images():
    import skimage.measure

    measure = cliper_measure()
    labels = np.zeros((5, 6), np.int32)
    ours = measure.regionprops_table(labels, properties=("label", "area", "bbox"))
    theirs = skimage.measure.regionprops_table(labels, properties=("label", "area", "bbox"))
    assert list(ours) == list(theirs) and all(ours[k].size == 0 for k in ours)
    with pytest.raises(AttributeError):
        measure.regionprops_table(labels, properties=("intensity_mean",))
    with pytest.raises(ValueError, match="perimeter"):
        measure.regionprops_table(np.ones((4, 4), int), properties=("perimeter",))
    with pytest.raises(NotImplementedError, match="moments_hu"):
        measure.regionprops_table(np.ones((3, 4, 4), int), properties=("moments_hu",))
    with pytest.raises(TypeError):
        measure.regionprops_table(np.ones((4, 4)), properties=("area",))


@pytest.mark.parametrize("shape,seed", SHAPES)
def test_device_labels_are_measured_where_they_are(shape, seed):
    """Labels already on the device (whole floats, as a device holds them): find_objects and regionprops_table
    give scipy's and skimage's results without a host copy of the labels."""
    import skimage.measure

    import cliper

    image, labels, n = case(shape, seed)
    on_device = cliper.asarray(labels.astype(np.float32))
    assert ndimage.find_objects(on_device) == sp.find_objects(labels)
    assert ndimage.find_objects(on_device, max_label=n + 2) == sp.find_objects(labels, max_label=n + 2)
    properties = ("label", "area", "bbox", "centroid_weighted", "moments_central")
    ours = cliper_measure().regionprops_table(on_device, image, properties=properties)
    theirs = skimage.measure.regionprops_table(labels, image, properties=properties)
    assert list(ours) == list(theirs)
    for k in theirs:
        assert ours[k].dtype == theirs[k].dtype, k
        scale = np.abs(theirs[k]).max() if k.startswith("moments") else 0
        np.testing.assert_allclose(ours[k], theirs[k], rtol=1e-6, atol=max(1e-12, 1e-6 * scale), err_msg=k)


def hull_labels(shape, seed):
    """Blobs of `case` plus scattered random pixels (non-convex, disconnected regions), a single pixel, a line
    and, in 3-D, a region flat in one slice and one flat in a plane at an angle (skimage's empty hull there)."""
    rng = np.random.default_rng(seed)
    _, labels, n = case(shape, seed)
    labels = labels.astype(np.int32)
    corner = tuple(slice(0, s // 3) for s in shape)
    view = labels[corner]
    view[(rng.random(view.shape) < 0.2) & (view == 0)] = n + 1
    labels[(-1,) * len(shape)] = n + 2
    labels[(shape[0] // 2,) + (slice(None),) * (len(shape) - 1)][..., -1] = n + 3
    if len(shape) == 3:
        labels[-1, 2:6, 3:7] = n + 4
        for k in range(4):
            labels[k + 2, k + 1, 2:5] = n + 5
    return labels


@pytest.mark.parametrize("shape,seed", SHAPES + [((24, 30, 28), 7)])
def test_convex_hull_properties_equal_scikit_image(shape, seed):
    """area_convex and solidity as skimage 0.26's, exactly (counts, and the same division of two integers; inf
    where a 3-D region is flat and skimage's hull is empty), of integer labels on the host and float32 and
    float64 labels on the device."""
    import warnings

    import skimage.measure

    import cliper

    labels = hull_labels(shape, seed)
    properties = ("label", "area", "area_convex", "solidity")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # skimage's qhull failures on flat regions, its division by 0
        theirs = skimage.measure.regionprops_table(labels, properties=properties)
    if len(shape) == 3:
        assert np.isinf(theirs["solidity"]).sum() >= 3  # the single voxel and the two flat regions
    for given in (labels, cliper.asarray(labels.astype(np.float32)), cliper.asarray(labels.astype(np.float64))):
        ours = cliper_measure().regionprops_table(given, properties=properties)
        assert list(ours) == list(theirs)
        for k in theirs:
            assert ours[k].dtype == theirs[k].dtype, k
            np.testing.assert_array_equal(ours[k], theirs[k], err_msg=k)


@pytest.mark.parametrize("shape,seed", SHAPES + [((24, 30, 28), 7)])
def test_feret_diameter_max_equals_scikit_image(shape, seed):
    """feret_diameter_max as skimage 0.26's, exactly (half-integer boundary points, one rounding of the square
    root). skimage raises ValueError on a 3-D region whose hull image is empty (flat voxel centres): so does
    cliper; without those regions the values agree."""
    import warnings

    import skimage.measure

    labels = hull_labels(shape, seed)
    properties = ("label", "area", "feret_diameter_max")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if len(shape) == 3:
            with pytest.raises(ValueError):
                skimage.measure.regionprops_table(labels, properties=properties)
            with pytest.raises(ValueError, match="feret_diameter_max of label"):
                cliper_measure().regionprops_table(labels, properties=properties)
            flat = skimage.measure.regionprops_table(labels, properties=("label", "area_convex"))
            labels[np.isin(labels, flat["label"][flat["area_convex"] == 0])] = 0
        theirs = skimage.measure.regionprops_table(labels, properties=properties)
    ours = cliper_measure().regionprops_table(labels, properties=properties)
    assert len(theirs["label"]) > 5
    for k in theirs:
        assert ours[k].dtype == theirs[k].dtype, k
        np.testing.assert_array_equal(ours[k], theirs[k], err_msg=k)

"""cliper's functions as the blocks of dask.array.map_overlap: a chunked volume (chunks that divide no axis
evenly) filtered block by block with enough overlap equals scipy on the whole volume. This is how work spreads
over a Dask cluster: each worker runs cliper on its own device (docs/python.md). Tolerances: float64 data, 1e-12
(the same sums in another order); the median is exact."""

import numpy as np
import pytest
import scipy.ndimage

from cliper import ndimage

da = pytest.importorskip("dask.array")


@pytest.fixture
def volume(rng):
    return rng.random((37, 45, 29))


def test_gaussian_blocks_equal_scipy_on_the_whole(volume):
    sigma = 1.5
    depth = int(4.0 * sigma + 0.5)  # scipy's radius at truncate=4
    chunked = da.from_array(volume, chunks=(16, 20, 13))
    result = chunked.map_overlap(ndimage.gaussian_filter, depth=depth, boundary="reflect", sigma=sigma, dtype=volume.dtype)
    np.testing.assert_allclose(result.compute(scheduler="threads"), scipy.ndimage.gaussian_filter(volume, sigma), rtol=1e-12, atol=1e-12)


def test_median_blocks_equal_scipy_on_the_whole(volume):
    chunked = da.from_array(volume, chunks=(12, 17, 29))
    result = chunked.map_overlap(ndimage.median_filter, depth=2, boundary="nearest", size=5, mode="nearest", dtype=volume.dtype)
    np.testing.assert_array_equal(result.compute(scheduler="threads"), scipy.ndimage.median_filter(volume, 5, mode="nearest"))

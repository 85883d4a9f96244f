"""cliper.ndarray's basic indexing and reductions against numpy on a 13×17×11 array (no tile size divides it), in
float64 and float32. Tolerances: indexing copies values (exact); min, max and the indices exact; sums and moments
in float64 rtol 1e-12 (≤ 2431 terms, chunked here and pairwise in numpy), in float32 rtol 2e-4 of the float64
value (float32 accumulation over ≤ 2431 terms, as numpy's float32 sums do)."""

import numpy as np
import pytest

import cliper


@pytest.fixture
def a3(rng):
    return rng.random((13, 17, 11))


KEYS = [
    np.s_[2:11, :, ::3],
    np.s_[-3:1:-2, ::-1, 4:-2],
    np.s_[5, 1::4],
    np.s_[..., 7],
    np.s_[9:2],
    np.s_[-100:100:5, 20:, 3],
    np.s_[()],
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("key", KEYS, ids=str)
def test_basic_indexing_equals_numpy(a3, dtype, key):
    x = a3.astype(dtype)
    got = cliper.asarray(x)[key]
    assert isinstance(got, cliper.ndarray) and got.dtype == dtype
    np.testing.assert_array_equal(got.get(), x[key])


def test_indexing_refusals_are_numpys_exceptions(a3):
    x = cliper.asarray(a3)
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 17"):
        x[0, 17]
    with pytest.raises(IndexError, match="basic indexing"):
        x[np.array([0, 1])]
    with pytest.raises(ValueError, match="step 0"):
        x[::0]


REDUCTIONS = [
    ("sum", {}),
    ("sum", {"axis": 0}),
    ("prod", {"axis": 1}),
    ("min", {"axis": -1}),
    ("max", {"axis": (0, 2), "keepdims": True}),
    ("mean", {"axis": 2}),
    ("var", {"axis": (0, 2), "ddof": 1}),
    ("std", {"axis": 1, "keepdims": True}),
    ("argmax", {"axis": 1}),
    ("argmin", {}),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("nan", [False, True], ids=["plain", "nan"])
@pytest.mark.parametrize("name,kwargs", REDUCTIONS, ids=lambda v: str(v))
def test_reductions_equal_numpy(a3, dtype, nan, name, kwargs):
    data = a3 + 0.5 if name == "prod" else a3.copy()
    if nan:
        data[4, 2, 3] = data[4, 9, 3] = data[7, 5, 0] = np.nan
    x = data.astype(dtype)
    with np.errstate(invalid="ignore"):
        want = getattr(x.astype(np.float64) if dtype == np.float32 else x, name)(**kwargs)
    got = getattr(cliper.asarray(x), name)(**kwargs)
    if name.startswith("arg"):
        assert isinstance(got, np.ndarray) and got.dtype == np.int64
        # float32 rounding may tie values float64 tells apart: compare with numpy on the float32 data itself.
        np.testing.assert_array_equal(got, getattr(x, name)(**kwargs))
        return
    got = got.get()
    assert got.dtype == dtype and got.shape == np.shape(want)
    exact = name in ("min", "max")
    rtol = 0 if exact else (1e-12 if dtype == np.float64 else 2e-4)
    scale = np.max(np.abs(want[np.isfinite(want)]), initial=0.0)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0 if exact else rtol * scale)

"""numpy's matrix products and norms on a device (cliper's ``matmul``, ``power``, ``norm`` and ``dot``
operations), with numpy's names.

>>> import numpy as np
>>> from cliper import linalg
>>> a = np.random.default_rng(0).random((3, 5, 7)); b = np.random.default_rng(1).random((3, 7, 4))
>>> bool(np.allclose(linalg.matmul(a, b), a @ b) and np.isclose(linalg.norm(a), np.linalg.norm(a)))
True
"""

import numpy as np

from ._array import ndarray
from ._ops import back, on_device, run

__all__ = ["matmul", "matrix_power", "norm", "vdot"]


def _same_type(*arrays):
    """Both operands in one element type (numpy's promotion), as the device multiplies them."""
    hosts = [a if isinstance(a, ndarray) else np.asarray(a) for a in arrays]
    dtype = np.result_type(*[h.dtype for h in hosts])
    return [h if isinstance(h, ndarray) and h.dtype == dtype else np.asarray(h, dtype=dtype) for h in hosts]


_GEMM_PRECISIONS = ("full", "fp32-split", "tf32")


def _gemm_precision(value):
    """The ``gemm_precision`` key of a product step, checked here so that a mistake names the keyword."""
    if value not in _GEMM_PRECISIONS:
        raise ValueError(f"gemm_precision={value!r}: expected one of {', '.join(_GEMM_PRECISIONS)}")
    return value


def matmul(a, b, *, gemm_precision="full"):
    """numpy.matmul for stacks of matrices (at least 2-D, the same leading axes): ``a @ b`` over the last two.

    ``gemm_precision`` (cliper's, keyword only) says how exactly float32 products may be formed: ``"full"``
    (plain FP32, numpy's float32 result), ``"fp32-split"`` (FP32's accuracy from three TF32 tensor-core products
    per term where the GPU has them: on an H200, 1.57× cuBLAS FP32 at 4096³) or ``"tf32"`` (one TF32 product per
    term, as PyTorch with TF32 allowed). complex64 products follow it too: on such GPUs they run as one real
    product of twice the depth and width (on an H200 at 4096³, 1.48× cuBLAS's complex64 FP32 at fp32-split).
    Elsewhere, and for float64/complex128, products are plain FP32 or FP64.

    >>> import numpy as np
    >>> from cliper import linalg
    >>> a = np.random.default_rng(2).random((64, 48), dtype=np.float32)
    >>> c = linalg.matmul(a, a.T, gemm_precision="fp32-split")
    >>> bool(np.allclose(c, a.astype(np.float64) @ a.T.astype(np.float64), rtol=1e-5))
    True
    """
    precision = _gemm_precision(gemm_precision)
    a, b = _same_type(a, b)
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError("matmul: cliper multiplies matrices (at least 2-D operands); reshape vectors to (n, 1)")
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                         f"(n?,k),(k,m?)->(n?,m?) (size {b.shape[-2]} is different from {a.shape[-1]})")
    (x, y), stay = on_device(a, b)
    return back(run("matmul", [x, y], {"gemm_precision": precision}), stay)


def matrix_power(a, n, *, gemm_precision="full"):
    """numpy.linalg.matrix_power for n ≥ 0 (square matrices, batched over leading axes); ``gemm_precision`` as
    :func:`matmul` takes it, for every product of the power."""
    precision = _gemm_precision(gemm_precision)
    n = int(n)
    if n < 0:
        raise NotImplementedError("matrix_power: cliper does not invert matrices (n must be ≥ 0)")
    (x,), stay = on_device(a if isinstance(a, ndarray) else np.asarray(a))
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError("Last 2 dimensions of the array must be square")
    return back(run("power", [x], {"n": n, "gemm_precision": precision}), stay)


def norm(x, ord=None, axis=None):
    """numpy.linalg.norm of vectors: the 2-norm of all elements (``ord=None``, any shape), or the ``ord``-norm
    (p ≥ 1 or inf) of a 1-D array or along one ``axis``. Matrix norms (2-D ``ord``) are not offered."""
    (d,), stay = on_device(x if isinstance(x, ndarray) else np.asarray(x))
    if isinstance(axis, (tuple, list)):
        raise NotImplementedError("norm: matrix norms over two axes are not offered")
    if ord is not None and axis is None and d.ndim != 1:
        raise NotImplementedError("norm: give axis= for a vector norm of an array of more than one axis")
    p = "inf" if ord in (np.inf, "inf") else (2.0 if ord is None else float(ord))
    if p != "inf" and p < 1:
        raise ValueError(f"norm: order {ord} is not a norm (p ≥ 1 or inf)")
    params = {"p": str(p)}
    if axis is not None:
        params["axis"] = int(axis)
    result = run("norm", [d], params)
    if stay:
        return result
    value = result.get()
    return value.real.astype(np.float64 if value.dtype in (np.float64, np.complex128) else np.float32)[()]


def vdot(a, b):
    """numpy.vdot: Σ conj(aᵢ)·bᵢ over every element (both flattened; the same number of elements)."""
    a, b = _same_type(a, b)
    if a.size != b.size:
        raise ValueError("cannot reshape array: vdot's operands must have the same number of elements")
    (x, y), stay = on_device(a, b)
    result = run("dot", [x, y], {"conj": True})
    return result if stay else result.get()[()]

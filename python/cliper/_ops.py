"""What every Python face of cliper shares: running an operation of ``cliper::chain::DEFINITIONS`` by name on
numpy or device arrays, and handing the result back the way the caller gave the input."""

import numpy as np

from . import _cliper
from ._array import asarray, ndarray


def on_device(*arrays, device=None):
    """The arrays as device arrays (on the first device array's device, else ``device``), and whether any was
    one already (the result then stays on the device)."""
    first = next((a for a in arrays if isinstance(a, ndarray)), None)
    target = first.device if first is not None else device
    return [asarray(a, target) for a in arrays], first is not None


def run(name, inputs, params):
    """Runs the operation ``name`` on device arrays with a pipeline step's keys (``None`` leaves a key to its
    default); the result stays on the device."""
    return ndarray(_cliper.apply(name, [x._handle for x in inputs], params))


def back(result, stay):
    """The result as the caller gave its input: a device array, or a numpy array."""
    return result if stay else result.get()


def as_complex(a):
    """numpy's promotion to complex for transforms: complex64 from float32/complex64 data, else complex128."""
    if isinstance(a, ndarray):
        if a.dtype.kind == "c":
            return a
        return asarray(np.asarray(a.get(), dtype=np.complex64 if a.dtype == np.float32 else np.complex128), a.device)
    a = np.asarray(a)
    if a.dtype.kind == "c":
        return a
    return np.asarray(a, dtype=np.complex64 if a.dtype == np.float32 else np.complex128)

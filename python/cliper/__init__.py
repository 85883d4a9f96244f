"""cliper: scipy.ndimage's semantics on any OpenCL device, in float32 and float64, with DICOM/NIfTI geometry
and MRI reconstruction; numpy arrays in and out, or device arrays (:class:`cliper.ndarray`) kept on the device.

>>> import cliper, numpy as np
>>> from cliper import ndimage
>>> ndimage.median_filter(np.array([1.0, 9.0, 2.0, 3.0]), size=3)
array([1., 2., 3., 3.])
"""

from . import _cliper
from ._array import Device, asarray, default_device, device_dtype, devices, get_device, ndarray
from . import ndimage
from . import io

__all__ = ["Device", "asarray", "default_device", "device_dtype", "devices", "get_device", "io", "ndarray", "ndimage"]
__version__ = "0.1.0"


def definitions():
    """Every operation cliper defines (``cliper::chain::DEFINITIONS``): ``(name, aliases, lowers_to, keys,
    inputs)``, the same list the command line and pipeline files read."""
    return _cliper.definitions()

"""cliper: scipy.ndimage's semantics on any OpenCL device, in float32 and float64, with DICOM/NIfTI geometry
and MRI reconstruction; numpy arrays in and out, or device arrays (:class:`cliper.ndarray`) kept on the device.

>>> import cliper, numpy as np
>>> from cliper import ndimage
>>> ndimage.median_filter(np.array([1.0, 9.0, 2.0, 3.0]), size=3)
array([1., 2., 3., 3.])
"""

from . import _cliper
from ._pool import map_devices
from ._array import Device, asarray, default_device, device_dtype, devices, get_device, ndarray
from . import feature, fft, filters, io, linalg, measure, morphology, mri, ndimage, segmentation

__all__ = ["run_pipeline", "definitions", "map_devices", "Device", "asarray", "default_device", "device_dtype", "devices", "get_device",
           "ndarray", "ndimage", "feature", "filters", "fft", "io", "linalg", "measure", "morphology", "mri", "segmentation"]
__version__ = "0.1.0"


def run_pipeline(path, device=None):
    """Runs a pipeline file (docs/cli.md's format) once, as ``cliper run FILE`` does: its inputs read, its steps
    on the device without copies between them, its outputs written (never over an input). Returns a dict:
    ``written``, ``(name, path, shape, dtype)`` per output file, and ``values``, the small results nobody saved,
    as numpy arrays.

    >>> import cliper, numpy as np, pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> np.save(folder / "x.npy", np.array([[1.0, 9.0, 2.0], [3.0, 4.0, 0.0]]))
    >>> steps = '''
    ... input.x = "x.npy"
    ... output.m = "m.npy"
    ... [[step]]
    ... op = "median"
    ... in = "x"
    ... out = "m"
    ... [[step]]
    ... op = "norm"
    ... in = "m"
    ... out = "n"
    ... '''
    >>> _ = (folder / "steps.toml").write_text(steps)
    >>> result = cliper.run_pipeline(folder / "steps.toml")
    >>> [(name, shape) for name, _, shape, _ in result["written"]], float(result["values"]["n"])
    ([('m', [2, 3])], 6.244997998398398)
    """
    return _cliper.run_pipeline(str(path), None if device is None else Device(device).id)


def definitions():
    """Every operation cliper defines (``cliper::chain::DEFINITIONS``): ``(name, aliases, lowers_to, keys,
    inputs)``, the same list the command line and pipeline files read."""
    return _cliper.definitions()

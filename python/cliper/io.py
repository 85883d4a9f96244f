"""Files as numpy arrays, in the axis order of the tool each format's users know: NIfTI as nibabel gives it,
DICOM series as pydicom users stack them, PNG/TIFF/NPY/MAT/CFL as Pillow, tifffile, numpy, scipy.io.loadmat and
BART's ``cfl.readcfl`` return them. The reading and writing is cliper's (docs/formats.md): every header checked
against the file's size before anything is allocated, compressed data checked to its checksum, every save written
to a temporary file and renamed, so a failed write leaves no partial file.

Refusals are one-line exceptions: ``FileNotFoundError`` (or another ``OSError``) for a path, ``ValueError`` for a
file or array that is not what the function reads or writes, naming the path, shape or type.

Affines are 4×4 numpy float64 arrays mapping the returned array's own indices to millimetres (NIfTI: RAS, as
nibabel; DICOM: LPS, as the DICOM tags), so ``spacing(affine)`` is the voxel size along each array axis.

>>> import numpy as np, cliper.io, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "volume.nii.gz")
>>> data = np.arange(24, dtype=np.int16).reshape(2, 3, 4)      # nibabel's (x, y, z)
>>> cliper.io.write_nifti(path, data, np.diag([0.8, 0.8, 2.5, 1.0]))
>>> back, affine = cliper.io.read_nifti(path)
>>> bool((back == data).all()), back.dtype, cliper.io.spacing(affine).tolist()
(True, dtype('int16'), [0.800000011920929, 0.800000011920929, 2.5])
"""

import os

import numpy as np

from ._cliper import (
    read_array as _read_array,
    read_dicom_series as _read_dicom_series,
    read_mat_variable as _read_mat_variable,
    read_nifti as _read_nifti,
    write_array as _write_array,
    write_mat_variable as _write_mat_variable,
    write_nifti as _write_nifti,
)

__all__ = ["read_nifti", "write_nifti", "read_dicom_series", "imread", "imwrite", "spacing"]

_NIFTI = (".nii", ".nii.gz")
_ARRAY_FILES = (".png", ".tif", ".tiff", ".npy", ".cfl", ".hdr", ".mat")


def read_nifti(path):
    """A NIfTI-1 or NIfTI-2 file (``.nii``, ``.nii.gz``) as ``(data, affine)``, as nibabel gives them.

    ``data`` is in nibabel's axis order, ``(x, y, z[, t, …])`` — ``nib.load(path).dataobj`` order, a Fortran-ordered
    view as nibabel's — with scl_slope/scl_inter applied as nibabel applies them:

    - **scaled files** (scl_slope non-zero and finite, and not slope 1 with intercept 0): **float64**, the values of
      ``img.get_fdata()`` (``stored · slope + intercept`` in float64);
    - **unscaled files**: the **stored type** (uint8 … int64, float32, float64, complex64, complex128, in the
      host's byte order), the values of ``np.asanyarray(img.dataobj)``; ``data.astype(np.float64)`` gives
      ``get_fdata()``.
    - RGB24/RGBA32 files: uint8 with the channels last, ``(x, y, z, 3 or 4)`` — nibabel's structured
      ``dataobj`` viewed as bytes.

    ``affine`` is ``img.affine``: the sform when sform_code ≠ 0, else the qform when qform_code ≠ 0, else nibabel's
    centred base affine. It maps ``(x, y, z, 1)`` indices to RAS+ coordinates in the file's unit (usually mm).
    ``None`` when the file states no usable affine: a pixdim of 0 without an sform (nibabel's load then takes that
    pixdim as 1 and gives an affine the file does not state), or a zero or non-finite sform column.

    >>> import numpy as np, cliper.io, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.nii")
    >>> cliper.io.write_nifti(path, np.zeros((5, 4, 3, 2), np.float32), np.eye(4))
    >>> data, affine = cliper.io.read_nifti(path)
    >>> data.shape, data.dtype
    ((5, 4, 3, 2), dtype('float32'))
    """
    path = _path(path, _NIFTI, "read_nifti")
    array, colour, affine, rescaled = _read_nifti(path)
    if colour:
        # cliper's [..., Z, C, Y, X]: channels to the end, the other axes reversed.
        array = np.moveaxis(array, -3, -1)
        order = list(range(array.ndim - 2, -1, -1)) + [array.ndim - 1]
        data = array.transpose(order)
    else:
        data = array.T
    if rescaled:  # nibabel's get_fdata(): float64
        data = data.astype(np.float64, order="K")
    return data, (None if affine is None else np.array(affine, dtype=np.float64))


def write_nifti(path, data, affine=None):
    """Writes ``data`` in nibabel's axis order ``(x, y, z[, t, …])`` (1 to 7 axes, each at most 32767) as a
    NIfTI-1 file, gzipped when ``path`` ends in ``.nii.gz``, that nibabel reads back with the same data (same
    dtype) and ``img.affine`` equal to ``affine`` rounded to float32 (NIfTI stores the sform in float32).

    ``affine`` (4×4, mapping ``(x, y, z, 1)`` to RAS+ millimetres) becomes the sform and, as nearly as a rotation
    and voxel sizes can say it, the qform (codes 1, scanner); ``None`` writes no transform, as
    ``nib.Nifti1Image(data, None)``. Types: uint8 … int64, float32, float64, complex64, complex128 (bool is written
    as uint8); others (float16, strings, objects) are a ``ValueError``. Grey data only: an ``(x, y, z, 3)`` array is
    written as four axes, not as RGB24.

    >>> import numpy as np, cliper.io, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "mask.nii.gz")
    >>> cliper.io.write_nifti(path, np.ones((3, 4, 5), bool), np.diag([2.0, 2.0, 2.0, 1.0]))
    >>> cliper.io.read_nifti(path)[0].dtype
    dtype('uint8')
    """
    path = _path(path, _NIFTI, "write_nifti")
    data = _host_array(data, "write_nifti")
    if data.ndim == 0:
        raise ValueError(f"write_nifti: {path}: a NIfTI holds 1 to 7 axes, not a 0-d array")
    if affine is not None:
        affine = np.asarray(affine, dtype=np.float64)
        if affine.shape != (4, 4):
            raise ValueError(f"write_nifti: {path}: the affine must be 4×4, not shape {affine.shape}")
        if not np.isfinite(affine).all():
            raise ValueError(f"write_nifti: {path}: the affine has non-finite entries ({affine.tolist()})")
        affine = affine.tolist()
    _write_nifti(path, np.ascontiguousarray(data.T), affine)


def read_dicom_series(folder):
    """A DICOM series — a folder holding one series, a file pattern (``scan/IM*``) or one file — as
    ``(volume, affine)``, as pydicom users stack it.

    ``volume[slice, row, column]``: every file's ``pixel_array`` (row, column as pydicom gives them), the slices
    sorted along the slice normal (ascending ``ImagePositionPatient · n``), RescaleSlope/RescaleIntercept applied:
    **float64** when a rescale other than slope 1, intercept 0 applies — the values of pydicom's
    ``apply_modality_lut`` — else the **stored type** (pydicom's ``apply_modality_lut`` gives float64 whenever the
    tags are present; the values are the same). A single file gives one slice, ``volume[0]``, a multi-frame file
    its frames. Mixed series, orientations or sizes, duplicated positions, a missing slice, a truncated file and
    colour images are refused (``ValueError``).

    ``affine`` maps ``(slice, row, column, 1)`` to DICOM patient coordinates (LPS+, mm)::

        X = IOP[0:3]  (direction of increasing column),  Y = IOP[3:6]  (increasing row),  n = X × Y
        Δr, Δc = PixelSpacing                            (between rows, between columns)
        P1, PN = ImagePositionPatient of the first and last slice in sorted order
        S = (PN − P1) / (N − 1)                          (the slice step, a vector; one file:
                                                          n · SpacingBetweenSlices, else SliceThickness, else 1)

        LPS(s, r, c) = P1 + s·S + r·Δr·Y + c·Δc·X
        affine = [[S, Δr·Y, Δc·X, P1], [0, 0, 0, 1]]     (columns)

    For a gantry-tilted CT, S is not along n (the affine is sheared) and ``affine @ (k, 0, 0, 1)`` is still slice
    k's ImagePositionPatient. NIfTI's RAS (nibabel's ``(x, y, z)`` order) is
    ``np.diag([-1, -1, 1, 1]) @ affine @ [[0,0,1,0],[0,1,0,0],[1,0,0,0],[0,0,0,1]]`` with ``volume.transpose(2, 1, 0)``
    (examples/python/ct_volumes.py).

    Run from the repository's root (``data/ct_series``, 24 axial slices of 64 × 64, 0.8 mm pixels 2.5 mm apart):

    >>> import cliper.io
    >>> volume, affine = cliper.io.read_dicom_series("data/ct_series")
    >>> volume.shape, volume.dtype, cliper.io.spacing(affine).tolist()
    ((24, 64, 64), dtype('float64'), [2.5, 0.8, 0.8])
    """
    path = os.fspath(folder)
    volume, affine, rescaled = _read_dicom_series(path)
    if volume.ndim == 2:
        volume = volume[np.newaxis]
    if rescaled:
        volume = volume.astype(np.float64)
    return volume, np.array(affine, dtype=np.float64)


def imread(path):
    """The array in a PNG, TIFF, NPY, MAT or CFL file, chosen by extension, in the order the reference reader
    returns it:

    - ``.npy``: as ``np.load`` (every integer, float and complex type; C or Fortran order; bool is refused).
    - ``.png``: as ``np.asarray(PIL.Image.open(path))`` — uint8 or uint16, grey ``(H, W)``, colour ``(H, W, C)``
      with C = 2 (grey + alpha), 3 or 4; palette images come expanded to RGB (Pillow's ``.convert("RGB")``), 2- and
      4-bit grey scaled to 8 bits as Pillow does, 1-bit images as uint8 0/255 (Pillow gives bool; its
      ``.convert("L")`` gives these); 16-bit colour stays uint16 (Pillow reduces it to 8 bits).
    - ``.tif``/``.tiff``: as ``tifffile.imread`` — grey ``(H, W)`` or pages ``(N, H, W)``; colour with the channels
      last, ``(H, W, C)`` or ``(N, H, W, C)``, also for planar files (tifffile gives those ``(C, H, W)``).
    - ``.mat``: as ``scipy.io.loadmat(path)[name]`` — ``file.mat:NAME`` names the variable, a file of one numeric
      variable needs no name; MATLAB's shape and indexing.
    - ``.cfl``/``.hdr`` (or a BART base name): as BART's ``cfl.readcfl`` — complex64, BART's dimensions with the
      trailing 1s dropped, ``x[i, j, …]`` = BART's ``(i, j, …)``.

    >>> import numpy as np, cliper.io, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "rgb.png")
    >>> cliper.io.imwrite(path, np.zeros((3, 5, 3), np.uint8))
    >>> cliper.io.imread(path).shape
    (3, 5, 3)
    """
    path, variable = _mat_variable(path)
    if variable is not None:
        return _read_mat_variable(path, variable)
    path = _path(path, _ARRAY_FILES, "imread", base_name_ok=True)
    array, colour = _read_array(path)
    return np.moveaxis(array, -3, -1) if colour else array


def imwrite(path, array, colour=None):
    """Writes ``array`` to a PNG, TIFF, NPY, MAT or CFL file by extension, atomically, so that the reference reader
    of :func:`imread` gives it back:

    - ``.npy``: every integer, float and complex type (little-endian, C order).
    - ``.png``: uint8 or uint16, grey ``(H, W)`` or colour ``(H, W, C)``, C = 2, 3, 4 (a PNG holds one image).
    - ``.tif``/``.tiff``: every type as grey ``(H, W)`` or pages ``(N, H, W)``; with ``colour=True``, real colour
      ``(H, W, C)`` or ``(N, H, W, C)`` with the channels last (an ``(N, H, 3)`` stack is grey unless told).
    - ``.mat``: every type, as the variable ``x`` or ``file.mat:NAME`` (added to the file, or replacing a variable
      of that name).
    - ``.cfl``: complex64 (a real array is written with zero imaginary parts; values must be exact in complex64).

    bool arrays are written as uint8. A type the format cannot hold is a ``ValueError`` naming it.

    >>> import numpy as np, cliper.io, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "a.mat") + ":image"
    >>> cliper.io.imwrite(path, np.arange(6.0).reshape(2, 3))
    >>> cliper.io.imread(path)[1, 2]
    np.float64(5.0)
    """
    array = _host_array(array, "imwrite")
    path, variable = _mat_variable(path)
    if variable is not None:
        _write_mat_variable(path, variable, np.ascontiguousarray(array))
        return
    path = _path(path, _ARRAY_FILES, "imwrite")
    extension = os.path.splitext(path)[1].lower()
    if colour is None:
        colour = extension == ".png" and array.ndim == 3
    if colour:
        if array.ndim not in (3, 4) or array.shape[-1] not in (2, 3, 4):
            raise ValueError(
                f"imwrite: {path}: a colour image is (H, W, C) or (N, H, W, C) with C = 2, 3 or 4, not shape "
                f"{array.shape}"
            )
        array = np.moveaxis(array, -1, -3)
    _write_array(path, np.ascontiguousarray(array), bool(colour))


def spacing(affine):
    """The voxel size along each axis of the array an affine belongs to: the lengths of its first three columns
    (``nibabel.affines.voxel_sizes``) — ``(x, y, z)`` for :func:`read_nifti`'s, ``(slice, row, column)`` for
    :func:`read_dicom_series`'s.

    >>> import numpy as np, cliper.io
    >>> cliper.io.spacing(np.diag([-0.8, 0.8, 2.5, 1.0])).tolist()
    [0.8, 0.8, 2.5]
    """
    affine = np.asarray(affine, dtype=np.float64)
    if affine.ndim != 2 or affine.shape[0] < 3 or affine.shape[1] < 4:
        raise ValueError(f"spacing: an affine is 4×4 (or 3×4), not shape {affine.shape}")
    return np.sqrt((affine[:3, :3] ** 2).sum(axis=0))


def _path(path, extensions, function, base_name_ok=False):
    """``path`` as a str, refused with a ``ValueError`` unless it ends in one of ``extensions`` (a missing file is
    left to the reader, which raises ``FileNotFoundError`` naming it)."""
    path = os.fspath(path)
    lower = path.lower()
    if lower.endswith(extensions):
        return path
    if base_name_ok and not os.path.splitext(path)[1] and os.path.isfile(path + ".cfl"):
        return path  # BART's base name: `us` for us.cfl + us.hdr
    raise ValueError(f"{function}: {path}: the name must end in {', '.join(extensions)}")


def _mat_variable(path):
    """``(path, NAME)`` for ``file.mat:NAME``, else ``(path, None)``."""
    path = os.fspath(path)
    head, colon, name = path.rpartition(":")
    if colon and head.lower().endswith(".mat") and name:
        return head, name
    return path, None


def _host_array(array, function):
    """``array`` as a numpy array in the host's byte order, bool as uint8; object and string arrays refused."""
    array = np.asarray(array)
    if array.dtype == np.bool_:
        return array.astype(np.uint8)
    if array.dtype.kind not in "uifc":
        raise ValueError(f"{function}: an array of {array.dtype} cannot be written (numbers only)")
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    return array

"""MRI reconstruction on a device (cliper's ``rsos``, ``sense``, ``cg-sense``, ``l1-wavelet``, ``tv``,
``espirit``, ``walsh-maps``, ``nufft-forward`` and ``nufft-adjoint`` operations), with SigPy's array layout and
parameter names: k-space is ``[coils, spatial…]`` (with any leading frames: ``[frames…, coils, spatial…]``, which share the maps and are
solved as one problem, as ``bart pics`` solves its TIME dimension), centred as scanners store it, and coil maps
``[coils, spatial…]``. ``spatial`` (2 or 3) says how many trailing axes are the image.

The iterative solvers are BART's ``pics`` without its scaling (``-w 1``): divide k-space by your scale first
when λ must mean what it means to ``pics -r`` with BART's automatic scaling (docs/mri.md).

>>> import numpy as np
>>> from cliper import mri
>>> coils = np.fft.fftshift(np.fft.fft2(np.fft.ifftshift(np.ones((4, 16, 16)), axes=(-2, -1))), axes=(-2, -1))
>>> np.allclose(mri.rsos(coils), 2.0, atol=1e-5)
True
"""

import numpy as np

from ._ops import as_complex, back, on_device, run

__all__ = ["rsos", "sense", "cg_sense", "l1_wavelet", "tv", "espirit", "walsh", "nufft", "nufft_adjoint"]


def _kspace(*arrays):
    return on_device(*[as_complex(a) for a in arrays])


def rsos(kspace, spatial=2, centered=True):
    """The root sum of squares of the coil images, √Σ|image_c|² (a real image; no maps)."""
    (y,), stay = _kspace(kspace)
    return back(run("rsos", [y], {"spatial": spatial, "uncentered": not centered}), stay)


def sense(kspace, mps, spatial=2, centered=True):
    """SENSE coil combination of fully sampled data: Σ image_c · conj(map_c) (a complex image)."""
    (y, m), stay = _kspace(kspace, mps)
    return back(run("sense", [y, m], {"spatial": spatial, "uncentered": not centered}), stay)


def cg_sense(kspace, mps, lamda=0.0, max_iter=30, spatial=2):
    """Iterative SENSE (SigPy's SenseRecon, BART's ``pics -l2 -r λ -i N -w 1``): conjugate gradients on
    (AᴴA + λI)x = Aᴴy, sampled where k-space is not zero."""
    (y, m), stay = _kspace(kspace, mps)
    params = {"spatial": spatial, "iters": int(max_iter), "lambda": float(lamda)}
    return back(run("cg-sense", [y, m], params), stay)


def l1_wavelet(kspace, mps, lamda, max_iter=30, cycle_spinning=True, spatial=2):
    """Compressed sensing with Daubechies-2 wavelets (SigPy's L1WaveletRecon, BART's ``pics -l1 -r λ -i N -w 1``;
    ``cycle_spinning=False`` is ``pics -n``): FISTA on ½‖Ax − y‖² + λ‖Wx‖₁."""
    (y, m), stay = _kspace(kspace, mps)
    params = {"spatial": spatial, "iters": int(max_iter), "lambda": float(lamda), "cycle_spinning": bool(cycle_spinning)}
    return back(run("l1-wavelet", [y, m], params), stay)


def tv(kspace, mps, lamda, max_iter=30, spatial=2):
    """Total-variation regularised reconstruction (SigPy's TotalVariationRecon, BART's ``pics -R T:7:0:λ -i N
    -w 1``): ADMM on ½‖Ax − y‖² + λ·TV(x); ``max_iter`` counts the inner CG iterations in all, as BART's -i."""
    (y, m), stay = _kspace(kspace, mps)
    return back(run("tv", [y, m], {"spatial": spatial, "iters": int(max_iter), "lambda": float(lamda)}), stay)


def espirit(kspace, calib_width=24, thresh=0.001, kernel_width=6, crop=0.8, spatial=2):
    """Coil sensitivity maps ``[coils, spatial…]`` by ESPIRiT (SigPy's EspiritCalib names; BART's ``ecalib -m1``
    defaults: a 24² calibration region, 6² kernels, singular values above √0.001 of the largest, crop 0.8)."""
    (y,), stay = _kspace(kspace)
    params = {"spatial": spatial, "calibration": int(calib_width), "threshold": float(thresh),
              "kernel_size": int(kernel_width), "crop": float(crop)}
    return back(run("espirit", [y], params), stay)


def walsh(kspace, smoothing=5, spatial=2):
    """Coil sensitivity maps by Walsh's method on the fully sampled centre's images (ismrmrd-python-tools'
    calculate_csm_walsh): unit vectors, no crop."""
    (y,), stay = _kspace(kspace)
    return back(run("walsh-maps", [y], {"spatial": spatial, "smoothing": int(smoothing)}), stay)


def _with_coord(data, coord):
    """Complex data and real coordinates of its precision, on one device."""
    data = as_complex(data)
    real = np.float32 if data.dtype == np.complex64 else np.float64
    coord = coord.get() if hasattr(coord, "get") else coord
    return on_device(data, np.asarray(coord, dtype=real))


def nufft(input, coord, eps=1e-6, kernel="es"):
    """The non-uniform FFT (SigPy's ``sigpy.nufft``, ``bart nufft``; FINUFFT's type 2): the image ``input``
    ``[batch…, N…]`` (its last ``d = coord.shape[-1]`` axes) at the points ``coord`` ``[points…, d]`` (cycles per
    field of view, within [−N/2, N/2); ``coord[..., i]`` along the image's i-th of those axes), as
    ``[batch…, points…]``: ``y_m = Σ_r x_r exp(−2πi k_m·r/N) / √ΠN``, ``r`` centred (index N//2 is 0). ``eps`` is the
    relative accuracy (complex64 reaches 1e-6); ``kernel="bart"`` grids as BART 0.8 does, errors included.

    >>> import numpy as np
    >>> from cliper import mri
    >>> image = np.zeros((8, 6), np.complex128)
    >>> image[4, 3] = 1
    >>> np.allclose(mri.nufft(image, np.array([[0.0, 0.0], [1.5, -2.0]]), eps=1e-9), 1 / np.sqrt(48))
    True
    """
    (x, c), stay = _with_coord(input, coord)
    return back(run("nufft-forward", [x, c], {"tolerance": float(eps), "kernel": kernel}), stay)


def nufft_adjoint(input, coord, oshape, eps=1e-6, kernel="es"):
    """The adjoint of :func:`nufft` (SigPy's ``sigpy.nufft_adjoint``, ``bart nufft -a``; FINUFFT's type 1): values at
    the points ``input`` ``[batch…, points…]`` to an image ``[batch…, oshape…]`` (``oshape``: the image's last
    ``coord.shape[-1]`` sizes, or its whole shape with the batch)."""
    (x, c), stay = _with_coord(input, coord)
    d = c.shape[-1]
    shape = ",".join(str(int(n)) for n in tuple(oshape)[-d:])
    return back(run("nufft-adjoint", [x, c], {"shape": shape, "tolerance": float(eps), "kernel": kernel}), stay)

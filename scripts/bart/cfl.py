import numpy as np
def readcfl(name):
    with open(name + ".hdr") as f:
        f.readline(); dims = [int(x) for x in f.readline().split()]
    n = int(np.prod(dims))
    d = np.fromfile(name + ".cfl", dtype=np.complex64, count=n)
    # trim trailing singleton dims to 16 total
    return d.reshape(dims, order='F')
def writecfl(name, arr):
    arr = np.asarray(arr, dtype=np.complex64)
    with open(name + ".hdr", "w") as f:
        f.write("# Dimensions\n" + " ".join(str(s) for s in arr.shape) + "\n")
    arr.ravel(order='F').tofile(name + ".cfl")
def modphase(n, inv=False):
    # BART fftmod multiplier along one axis of length n
    c = n // 2
    j = np.arange(n)
    ph = (j - c / 2.0) * (c / n)
    return np.exp((-2j if inv else 2j) * np.pi * ph)
def fftmod(x, axes, inv=False):
    x = x.copy()
    for a in axes:
        if x.shape[a] == 1: continue
        sh = [1] * x.ndim; sh[a] = x.shape[a]
        x = x * modphase(x.shape[a], inv).reshape(sh)
    return x

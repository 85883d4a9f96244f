"""BART's CFL pair as the benchmark scripts read and write it (mri-vs-bart.sh, ecalib-vs-bart.sh): `rd(name)`
gives the complex64 array in BART's dims (column-major), with the dims list; `wr(name, array, dims)` writes one."""
import numpy as np


def rd(name):
    dims = [int(x) for x in open(name + ".hdr").read().split("\n")[1].split()]
    return np.fromfile(name + ".cfl", dtype=np.complex64).reshape(dims, order="F"), dims


def wr(name, array, dims):
    open(name + ".hdr", "w").write("# Dimensions\n" + " ".join(map(str, dims)) + "\n")
    array.astype(np.complex64).ravel(order="F").tofile(name + ".cfl")

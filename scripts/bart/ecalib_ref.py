# numpy re-derivation of bart ecalib -m1 (2-D, defaults) for verification only
import numpy as np, sys
from scipy.linalg import lapack
sys.path.insert(0, '/tmp/bartspec/ref')
from cfl import readcfl, writecfl, fftmod

def pattern(ksp):  # ksp (X,Y,Z,C)
    return (np.sqrt(np.sum(np.abs(ksp)**2, axis=3)) != 0).astype(float)

def calib_geom(ksp, calsize):
    X, Y, Z, C = ksp.shape
    pat = pattern(ksp)
    dims = [X, Y, Z]
    cal = [1, 1, 1]; pos = [(d - 1) // 2 for d in dims]
    stop = [False] * 3
    while not all(stop):
        for i in range(3):
            if cal[i] == dims[i]: stop[i] = True
            if cal[i] >= calsize[i]: stop[i] = True
            if stop[i]: continue
            cal[i] += 1; pos[i] = (dims[i] - cal[i]) // 2
            blk = pat[pos[0]:pos[0]+cal[0], pos[1]:pos[1]+cal[1], pos[2]:pos[2]+cal[2]]
            if not np.all(blk == 1):
                cal[i] -= 1; pos[i] = (dims[i] - cal[i]) // 2; stop[i] = True
    # readout position with maximal energy (first maximum)
    best, beste = 0, 0.0
    for r in range(X - cal[0] + 1):
        e = np.sum(np.abs(ksp[r:r+cal[0], pos[1]:pos[1]+cal[1], pos[2]:pos[2]+cal[2], :])**2)
        if e > beste: best, beste = r, e
    pos[0] = best
    return cal, pos

def extract_calib(ksp, calsize):
    X, Y, Z, C = ksp.shape
    # first crop to centre block of (X, min(cs1,Y), min(cs2,Z))
    td = [X, min(calsize[1], Y), min(calsize[2], Z)]
    tp = [(X - td[0]) // 2, (Y - td[1]) // 2, (Z - td[2]) // 2]
    tmp = ksp[tp[0]:tp[0]+td[0], tp[1]:tp[1]+td[1], tp[2]:tp[2]+td[2], :]
    cal, pos = calib_geom(tmp, calsize)
    return tmp[pos[0]:pos[0]+cal[0], pos[1]:pos[1]+cal[1], pos[2]:pos[2]+cal[2], :], cal, [p + q for p, q in zip(pos, tp)]

def sinc_resize_axis(x, n_out, axis):
    n_in = x.shape[axis]
    t = fftmod(x, [axis]); t = np.fft.fft(t, axis=axis); t = fftmod(t, [axis])
    pad = n_out // 2 - n_in // 2
    shp = list(x.shape); shp[axis] = n_out
    o = np.zeros(shp, dtype=complex)
    sl = [slice(None)] * x.ndim; sl[axis] = slice(pad, pad + n_in)
    o[tuple(sl)] = t
    o = fftmod(o, [axis], inv=True); o = np.fft.ifft(o, axis=axis) * n_out; o = fftmod(o, [axis], inv=True)
    return o

def ecalib(ksp, calsize=(24, 24, 24), k=6, thr=0.001, crop=0.8, niter=30):
    X, Y, Z, C = ksp.shape
    cal, cdims, cpos = extract_calib(ksp, calsize)
    kd = [k if d > 1 else 1 for d in (X, Y, Z)]
    cx, cy, cz = cal.shape[:3]
    # Casorati matrix: rows = shifts (sx fastest), cols = (kx,ky,kz,c) kx fastest
    rows = []
    for sz in range(cz - kd[2] + 1):
        for sy in range(cy - kd[1] + 1):
            for sx in range(cx - kd[0] + 1):
                rows.append(cal[sx:sx+kd[0], sy:sy+kd[1], sz:sz+kd[2], :].ravel(order='F'))
    A = np.array(rows)
    G = A.conj().T @ A
    w, V = np.linalg.eigh(G)
    w = w[::-1]; V = V[:, ::-1]
    sv = np.sqrt(np.maximum(w, 0))
    n = int(np.sum(sv / sv[0] > np.sqrt(thr)))
    kern = np.conj(V[:, :n])                     # BART's kernels are conj of right singular vectors
    kern = kern.reshape(kd[0], kd[1], kd[2], C, n, order='F')
    hx = [2 * d if d > 1 else 1 for d in kd]
    big = np.zeros((hx[0], hx[1], hx[2], C, n), dtype=complex)
    p = [h // 2 - d // 2 for h, d in zip(hx, kd)]
    big[p[0]:p[0]+kd[0], p[1]:p[1]+kd[1], p[2]:p[2]+kd[2]] = kern
    big = fftmod(big, [0, 1, 2], inv=True)
    a = np.fft.ifftn(big, axes=(0, 1, 2)) * np.prod(hx)  # unnormalised inverse FFT
    W = np.einsum('xyzck,xyzdk->xyzcd', a, a.conj()) / (np.prod(kd) * np.prod(hx))
    # sinc interpolation of each matrix entry, last axis first
    for ax, nout in ((2, Z), (1, Y), (0, X)):
        if W.shape[ax] != nout:
            W = sinc_resize_axis(W, nout, ax)
    # power iteration from e_0, 30 iterations
    x = np.zeros((X, Y, Z, C), dtype=complex); x[..., 0] = 1
    for it in range(niter):
        x = np.einsum('xyzcd,xyzd->xyzc', W, x)
        val = np.sqrt(np.sum(np.abs(x)**2, axis=3))
        x = x / val[..., None]
    s = x * (val >= crop)[..., None]
    # phase reference: principal eigenvector from LAPACK cheev of conj(D^H D)
    D = cal.reshape(-1, C, order='F')
    F = (D.conj().T @ D).T.astype(np.complex64)
    ww, vv, info = lapack.cheev(F, compute_v=1, lower=0)
    z = vv[:, -1]
    t = np.einsum('xyzc,c->xyz', s, z.conj())
    ph = np.where(np.abs(t) > 0, t / np.where(np.abs(t) > 0, np.abs(t), 1), 1)
    s = s * np.conj(ph)[..., None]
    return s[..., None], val, n, z

if __name__ == '__main__':
    ksp = readcfl(sys.argv[1])[:, :, :, :, 0] if readcfl(sys.argv[1]).ndim > 4 else readcfl(sys.argv[1])
    ksp = ksp.reshape(ksp.shape[:4], order='F')
    s, val, n, z = ecalib(ksp.astype(complex))
    b = readcfl(sys.argv[2]); b = b.reshape(s.shape, order='F')
    e = readcfl(sys.argv[3]).reshape(val.shape, order='F')
    print('kernels', n, 'rot', np.round(z, 4))
    print('nrmse maps', np.linalg.norm(s - b) / np.linalg.norm(b))
    print('nrmse emaps', np.linalg.norm(val - e) / np.linalg.norm(e))
    print('nrmse |maps|', np.linalg.norm(abs(s) - abs(b)) / np.linalg.norm(b))
    writecfl('/tmp/bartspec/ref_sens', s)

# numpy re-derivation of bart pics (Cartesian, 2-D, 1 map) for verification only
import numpy as np, sys
sys.path.insert(0, '/tmp/bartspec/ref')
from cfl import readcfl, writecfl

AX = (0, 1)
def Fu(x):  return np.fft.fftshift(np.fft.fftn(np.fft.ifftshift(x, axes=AX), axes=AX, norm='ortho'), axes=AX)
def Fuh(x): return np.fft.fftshift(np.fft.ifftn(np.fft.ifftshift(x, axes=AX), axes=AX, norm='ortho'), axes=AX)

# ---------- scaling (estimate_scaling, Cartesian) ----------
def calib_region(ksp, calsize=(32, 32, 32)):
    sys.path.insert(0, '/tmp/bartspec/ref')
    import ecalib_ref as E
    cal, c, p = E.extract_calib(ksp[:, :, None, :], calsize)
    return cal[:, :, 0, :], c, p
def estimate_scaling(ksp):
    cal, c, p = calib_region(ksp)
    X, Y = ksp.shape[:2]
    img = np.fft.ifftn(cal, axes=AX) * np.sqrt(cal.shape[0] * cal.shape[1])   # unnormalised ifft, then 1/sqrt(Ncal)
    rss = np.sqrt(np.sum(np.abs(img)**2, axis=2)).ravel()
    rescale = np.sqrt(X / cal.shape[0]) * np.sqrt(Y / cal.shape[1])
    v = np.sort(rss); n = v.size
    med, p90, mx = v[n // 2] / rescale, v[int(n * 0.9)] / rescale, v[-1] / rescale
    return (p90 if (mx - p90) < 2 * (p90 - med) else mx), (mx, p90, med, c, p)

# ---------- operators ----------
class Sense:
    def __init__(s, maps, pat): s.S = maps; s.P = pat[:, :, None]
    def A(s, x):   return Fu(s.S * x[:, :, None])
    def AH(s, k):  return np.sum(np.conj(s.S) * Fuh(k), axis=2)
    def N(s, x):   return s.AH(s.P * s.A(x))   # P = W^2, W = sqrt(pattern)

def rdot(a, b): return np.real(np.vdot(a, b))

def cg(Nop, b, x, maxiter, lam=0.0, tol=0.0, count=None):
    r = b - (Nop(x) + lam * x); p = r.copy()
    rsold = rdot(r, r); eps2 = tol**2; k = 0
    if rsold == 0: return x, 0
    for i in range(maxiter):
        Ap = Nop(p) + lam * p; k += 1
        pAp = rdot(p, Ap)
        if pAp == 0: break
        a = rsold / pAp
        x = x + a * p; r = r - a * Ap
        rsnew = rdot(r, r)
        beta = rsnew / rsold; rsold = rsnew
        if rsnew <= eps2: break
        p = r + beta * p
    return x, k

# ---------- wavelets (dau2, symmetric extension, redundant) ----------
DAU2 = dict(lo_d=np.array([-0.1294095225512603, 0.2241438680420134, 0.8365163037378077, 0.4829629131445341]),
            hi_d=np.array([-0.4829629131445341, 0.8365163037378077, -0.2241438680420134, -0.1294095225512603]),
            lo_r=np.array([0.4829629131445341, 0.8365163037378077, 0.2241438680420134, -0.1294095225512603]),
            hi_r=np.array([-0.1294095225512603, -0.2241438680420134, 0.8365163037378077, -0.4829629131445341]))
def bandsize(n, fl): return (n + fl - 1) // 2
def refl(p, n):
    p = np.where(p < 0, -p - 1, p); return np.where(p >= n, 2 * n - 1 - p, p)
def down(x, h, axis):
    x = np.moveaxis(x, axis, 0); n = x.shape[0]; fl = len(h); m = bandsize(n, fl)
    out = np.zeros((m,) + x.shape[1:], dtype=complex)
    j = np.arange(m)
    for l in range(fl):
        out += x[refl(2 * j + 1 - (fl - 1) + l, n)] * h[fl - 1 - l]
    return np.moveaxis(out, 0, axis)
def up(c, g, n, axis):
    c = np.moveaxis(c, axis, 0); m = c.shape[0]; fl = len(g)
    out = np.zeros((n,) + c.shape[1:], dtype=complex)
    for nn in range(n):
        for l in range((nn + 1) % 2, fl, 2):
            j = (nn + l - 1) // 2
            if 0 <= j < m: out[nn] += c[j] * g[fl - 1 - l]
    return np.moveaxis(out, 0, axis)
def levels_for(n, minsize, fl=4):
    L = 1
    while True:
        n = bandsize(n, fl); L += 1
        if n < minsize: return L
def fwt(x, axes, minsize, W=DAU2):
    # returns list of detail-band arrays + final low band; recursion on the all-low band
    bands = []; cur = x; act = list(axes)
    while act:
        parts = {(): cur}
        for ax in act:
            new = {}
            for key, v in parts.items():
                new[key + (0,)] = down(v, W['lo_d'], ax); new[key + (1,)] = down(v, W['hi_d'], ax)
            parts = new
        low = parts.pop(tuple([0] * len(act)))
        bands.append((list(act), cur.shape, parts))
        cur = low
        act = [ax for ax in act if cur.shape[ax] >= minsize[ax]]
    return bands, cur
def iwt(bands, low, W=DAU2):
    cur = low
    for act, shape, parts in reversed(bands):
        parts = dict(parts); parts[tuple([0] * len(act))] = cur
        for i in reversed(range(len(act))):
            ax = act[i]; new = {}
            for key in set(k[:i] for k in parts):
                new[key] = up(parts[key + (0,)], W['lo_r'], shape[ax], ax) + up(parts[key + (1,)], W['hi_r'], shape[ax], ax)
            parts = new
        cur = parts[()]
    return cur
def soft(x, t):
    a = np.abs(x); red = a - t
    return np.where(red > 0, red / np.where(a > 0, a, 1), 0) * x
def wav_thresh(x, thr, shifts, minsize):
    xs = np.roll(x, shifts, axis=(0, 1))
    bands, low = fwt(xs, [0, 1], minsize)
    bands = [(a, s, {k: soft(v, thr) for k, v in p.items()}) for a, s, p in bands]
    y = iwt(bands, soft(low, thr))
    return np.roll(y, [-s for s in shifts], axis=(0, 1))

def rand_r(state):
    nxt = state[0]
    nxt = (nxt * 1103515245 + 12345) & 0xffffffff; res = (nxt // 65536) % 2048
    nxt = (nxt * 1103515245 + 12345) & 0xffffffff; res = (res << 10) ^ ((nxt // 65536) % 1024)
    nxt = (nxt * 1103515245 + 12345) & 0xffffffff; res = (res << 10) ^ ((nxt // 65536) % 1024)
    state[0] = nxt; return res
def rand_lim(state, limit):
    div = 2147483647 // (limit + 1)
    while True:
        r = rand_r(state) // div
        if r <= limit: return r

def fista(op, b, lam, maxiter, step=0.95, randshift=True):
    X, Y = b.shape; minsize = [min(X, 16), min(Y, 16)]
    x = np.zeros_like(b); o = x.copy(); t = 1.0; st = [1]
    for it in range(maxiter):
        sh = [rand_lim(st, 1 << levels_for(n, m)) for n, m in zip((X, Y), minsize)] if randshift else [0, 0]
        x = wav_thresh(x, lam * step, sh, minsize)
        tn = (1 + np.sqrt(1 + 4 * t * t)) / 2
        x, o = o, x                         # o <- thresholded, x <- previous thresholded
        x = ((1 - t) / tn) * x + (1 + (t - 1) / tn) * o
        t = tn
        r = b - op.N(x)
        x = x + step * r
    return x

# ---------- TV via ADMM ----------
def grad(x):  # BART "forward" difference: x[i]-x[i-1], periodic; third comp for singleton dim 2 is 0
    return np.stack([x - np.roll(x, 1, 0), x - np.roll(x, 1, 1), np.zeros_like(x)], axis=-1)
def gradH(g):
    return (g[..., 0] - np.roll(g[..., 0], -1, 0)) + (g[..., 1] - np.roll(g[..., 1], -1, 1))
def soft_joint(v, t):
    a = np.sqrt(np.sum(np.abs(v)**2, axis=-1, keepdims=True)); red = a - t
    return np.where(red > 0, red / np.where(a > 0, a, 1), 0) * v
def admm_tv(op, b, lam, maxiter, rho=0.5, maxitercg=10, alpha=1.6, cg_eps=1e-3):
    x = np.zeros_like(b); z = np.zeros(b.shape + (3,), complex); u = np.zeros_like(z); inv = 0
    Nop = lambda v: rho * gradH(grad(v)) + op.N(v)
    for i in range(maxiter):
        rhs = rho * gradH(z - u) + b
        x, k = cg(Nop, rhs, x, maxitercg, tol=cg_eps * np.linalg.norm(rhs))
        inv += k
        Gx = grad(x)
        v = alpha * Gx + (1 - alpha) * z + u
        z = soft_joint(v, lam / rho)
        u = v - z
        if inv > maxiter: break
    return x, i + 1

if __name__ == '__main__':
    ksp = readcfl(sys.argv[1]).reshape(128, 128, 8, order='F').astype(complex)
    maps = readcfl(sys.argv[2]).reshape(128, 128, 8, order='F').astype(complex)
    mode = sys.argv[3]; lam = float(sys.argv[4]); it = int(sys.argv[5]); bartout = sys.argv[6]
    extra = sys.argv[7:]
    pat = (np.sqrt(np.sum(np.abs(ksp)**2, axis=2)) != 0).astype(float)
    sc, info = estimate_scaling(ksp)
    if '-w1' in extra: sc = 1.0
    print('scaling', sc, info)
    op = Sense(maps, pat)
    b = op.AH(pat[:, :, None] * ksp / sc)
    if mode == 'l2':
        x, _ = cg(op.N, b, np.zeros_like(b), it, lam=lam)
    elif mode == 'l1':
        x = fista(op, b, lam, it, randshift=('-n' not in extra))
    elif mode == 'tv':
        x, nit = admm_tv(op, b, lam, it); print('admm outer iterations', nit)
    ref = readcfl(bartout).reshape(128, 128, order='F')
    print(mode, 'nrmse vs bart:', np.linalg.norm(x - ref) / np.linalg.norm(ref))

// Fast Fourier transforms (Fft): Stockham autosort passes of radix 2, 3, 4, 5 and 7 over one axis of a
// contiguous [outer, n, inner] array, and the three element-wise steps of Bluestein's algorithm for other
// lengths. T is float2 or double2. The host prepends fft_butterflies.cl (the length-R DFTs and their tables).
//
// Pass (Govindaraju et al., "High performance discrete Fourier transforms on graphics processors", 2008):
// with m = n/R and ns the length of the sub-transforms already done, work-item j of a row reads
// x[j + r·m] (r < R), multiplies by the twiddle ω_n^{r·(j mod ns)·n/(ns·R)}, does a length-R DFT and writes
// the results at (j/ns)·ns·R + (j mod ns) + r·ns. After the passes (ns = 1, R₁, R₁R₂, … n) the output is in
// natural order. `inverse` conjugates every twiddle (the unscaled inverse transform); `scale` multiplies the
// results (the normalisation, applied in an axis's last pass).

// A program holds one part, chosen by FFT_PART (NVIDIA's compiler spends time on every kernel of a program): 1 the
// passes and Bluestein's steps, 2 hermitian_extend, 3 fft_roots.
#if FFT_PART == 1
#define DEFINE_PASS(RAD) \
    kernel void fft_pass##RAD(global const T* restrict src, global T* restrict dst, global const T* restrict roots, \
                              IDX n, IDX inner, IDX ns, IDX total, R scale, int inverse) { \
        IDX gid = get_global_id(0); \
        if (gid >= total) return; \
        IDX m = n / RAD; \
        IDX i = gid % inner; \
        IDX t = gid / inner; \
        IDX j = t % m; \
        IDX base = (t / m) * n * inner + i; \
        IDX jns = j % ns; \
        IDX step = jns * (n / (ns * RAD)); \
        T v[RAD]; \
        v[0] = src[base + j * inner]; \
        _Pragma("unroll") for (int r = 1; r < RAD; r++) { \
            v[r] = MUL(src[base + (j + r * m) * inner], twiddle(roots, r * step, inverse)); \
        } \
        dft##RAD(v, inverse); \
        IDX out = base + ((j / ns) * ns * RAD + jns) * inner; \
        _Pragma("unroll") for (int r = 0; r < RAD; r++) dst[out + r * ns * inner] = v[r] * scale; \
    }

DEFINE_PASS(2)
DEFINE_PASS(3)
DEFINE_PASS(4)
DEFINE_PASS(5)
DEFINE_PASS(7)

// Bluestein, step 1: dst[o, k, i] = src[o, k, i] · chirp[k] for k < n, zero for n ≤ k < m ([outer, m, inner]).
kernel void bluestein_pre(global const T* restrict src, global T* restrict dst, global const T* restrict chirp,
                          IDX n, IDX m, IDX inner, IDX total) {
    IDX gid = get_global_id(0);
    if (gid >= total) return;
    IDX i = gid % inner;
    IDX t = gid / inner;
    IDX k = t % m;
    dst[gid] = k < n ? MUL(src[((t / m) * n + k) * inner + i], chirp[k]) : ZERO;
}

// Step 2 (between the forward and the inverse length-m transforms): a[o, k, i] ·= kernel_hat[k].
kernel void bluestein_mul(global T* restrict a, global const T* restrict kernel_hat, IDX m, IDX inner, IDX total) {
    IDX gid = get_global_id(0);
    if (gid >= total) return;
    a[gid] = MUL(a[gid], kernel_hat[(gid / inner) % m]);
}

// Step 3: dst[o, k, i] = src[o, k, i] · chirp[k] · scale for k < n (src is [outer, m, inner]).
kernel void bluestein_post(global const T* restrict src, global T* restrict dst, global const T* restrict chirp,
                           IDX n, IDX m, IDX inner, IDX total, R scale) {
    IDX gid = get_global_id(0);
    if (gid >= total) return;
    IDX i = gid % inner;
    IDX t = gid / inner;
    IDX k = t % n;
    dst[gid] = MUL(src[((t / n) * m + k) * inner + i], chirp[k]) * scale;
}

#elif FFT_PART == 2
// irfft's Hermitian extension along one axis: dst[o, k, i] (k < n) from the half spectrum src[o, k', i] (k' < m):
// X[k] for k ≤ n/2 and conj(X[n − k]) above, zero where the half spectrum is shorter than needed.
kernel void hermitian_extend(global const T* restrict src, global T* restrict dst, IDX m, IDX n, IDX inner,
                             IDX total) {
    IDX gid = get_global_id(0);
    if (gid >= total) return;
    IDX i = gid % inner;
    IDX t = gid / inner;
    IDX k = t % n;
    IDX o = t / n;
    int mirrored = k > n / 2;
    IDX from = mirrored ? n - k : k;
    T v = from < m ? src[(o * m + from) * inner + i] : ZERO;
    dst[gid] = mirrored ? CONJ(v) : v;
}

#elif FFT_PART == 3
// ---- fft_roots: the forward roots exp(−2πi·k/n), k < n, in double precision and rounded once to T — what the
// host's float64 table holds, without the host's time (2^24 roots took it 0.57 s of an FFT's init, the only part
// the program cache does not remove). Only where the device has doubles; the host computes the table elsewhere.
#ifdef cl_khr_fp64
#if !IS_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
kernel void fft_roots(global T* restrict roots, IDX n) {
    IDX k = get_global_id(0);
    if (k >= n) return;
    double x = -2.0 * (double)k / (double)n;
    roots[k] = (T)((R)cospi(x), (R)sinpi(x));
}
#if !IS_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : disable
#endif
#endif
#endif

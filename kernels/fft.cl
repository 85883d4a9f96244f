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

// ---- One work-group per `cols` lines: every pass of a length-n transform in local memory (n·cols·2 elements).
// A line is one transform: for inner > 1, lines are adjacent columns of [outer, n, inner] (line l = (o, i),
// elements at o·n·inner + i + j·inner), so `cols` adjacent columns load together, coalesced; for inner == 1
// lines are consecutive rows. The passes are the same Stockham passes as fft_passR, ping-ponging between two
// local buffers; the radices travel in a ulong8 (at most eight passes).

inline IDX line_base(IDX l, IDX n, IDX inner) {
    return inner > 1 ? (l / inner) * n * inner + l % inner : l * n;
}

#define LOCAL_BUTTERFLY(RAD) \
    for (uint b = lid; b < cols * m; b += W) { \
        uint c = b / m, j = b % m; \
        local const T* row = in + c * n; \
        uint jns = j % ns; \
        IDX step = (IDX)jns * (n / (ns * RAD)); \
        T v[RAD]; \
        v[0] = row[j]; \
        _Pragma("unroll") for (int r = 1; r < RAD; r++) v[r] = MUL(row[j + r * m], twiddle(roots, r * step, inverse)); \
        dft##RAD(v, inverse); \
        local T* o = out + c * n + (j / ns) * ns * RAD + jns; \
        _Pragma("unroll") for (int r = 0; r < RAD; r++) o[r * ns] = v[r]; \
    }

// With tw_n > 0 (the first step of a four-step transform of length tw_n = n·tw_n2 whose lines are the columns
// j2 < tw_n2 of [n, tw_n2] blocks, tw_inner apart), each result k is also multiplied by ω_{tw_n}^{j2·k}, read
// from tw_roots (length tw_n).
kernel void fft_local(global const T* restrict src, global T* restrict dst, global const T* restrict roots, IDX n_,
                      IDX inner, IDX lines, uint cols, uint npass, ulong8 radices, R scale, int inverse,
                      local T* buf_a, local T* buf_b, global const T* restrict tw_roots, IDX tw_n, IDX tw_n2,
                      IDX tw_inner) {
    const uint lid = get_local_id(0), W = get_local_size(0);
    const uint n = (uint)n_;
    const IDX l0 = (IDX)get_group_id(0) * cols;
    const uint total = cols * n;
    const IDX stride = inner > 1 ? inner : 1;
    for (uint t = lid; t < total; t += W) {
        uint c = inner > 1 ? t % cols : t / n;
        uint j = inner > 1 ? t / cols : t % n;
        IDX l = l0 + c;
        buf_a[c * n + j] = l < lines ? src[line_base(l, n_, inner) + (IDX)j * stride] : ZERO;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    local T* in = buf_a;
    local T* out = buf_b;
    uint ns = 1;
    for (uint p = 0; p < npass; p++) {
        uint rad = (uint)(p == 0 ? radices.s0 : p == 1 ? radices.s1 : p == 2 ? radices.s2 : p == 3 ? radices.s3
                        : p == 4 ? radices.s4 : p == 5 ? radices.s5 : p == 6 ? radices.s6 : radices.s7);
        uint m = n / rad;
        switch (rad) {
            case 2: LOCAL_BUTTERFLY(2) break;
            case 3: LOCAL_BUTTERFLY(3) break;
            case 4: LOCAL_BUTTERFLY(4) break;
            case 5: LOCAL_BUTTERFLY(5) break;
            default: LOCAL_BUTTERFLY(7) break;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        local T* swap = in;
        in = out;
        out = swap;
        ns *= rad;
    }
    for (uint t = lid; t < total; t += W) {
        uint c = inner > 1 ? t % cols : t / n;
        uint j = inner > 1 ? t / cols : t % n;
        IDX l = l0 + c;
        if (l < lines) {
            T v = in[c * n + j] * scale;
            if (tw_n > 0) v = MUL(v, twiddle(tw_roots, ((l / tw_inner) % tw_n2) * (IDX)j % tw_n, inverse));
            dst[line_base(l, n_, inner) + (IDX)j * stride] = v;
        }
    }
}

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

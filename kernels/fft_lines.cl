// fft_lines: every pass of a length-N transform of C lines per work-group, with the data in registers and one
// exchange through local memory between passes (the scheme of VkFFT and of cuFFT's small kernels). The host
// generates, per plan, the constants below and FFT_PASSES, the sequence of PASS_* macros for its radices, so
// every index, radix and loop bound is a compile-time constant.
//
//   N, C, TPL    length, lines per group, work-items per line (the group has C·TPL work-items)
//   COLUMNS      1: the group's lines are adjacent in memory (columns of [outer, N, inner]), so consecutive
//                work-items take consecutive lines and every load and store is coalesced; 0: rows, consecutive
//                work-items take consecutive elements of one line
//   SPLIT        1: exchange the real and the imaginary parts one after the other through a buffer of reals
//                (half the local memory: 8192-point c32 lines fit in 32 KiB)
//   INVERSE      the direction (conjugated twiddles and butterflies)
//   TWIDDLE_OUT  multiply result e of line l by ω_n^{((l / tw_inner) mod tw_n2)·e}, n = N·tw_n2 (a four-step's first part;
//                the exponent is below n, as row < tw_n2 and e < N),
//                from tw_roots: 2^TW_SHIFT values ω^lo, then ω^(hi·2^TW_SHIFT), with ω^x = ω^lo·ω^(hi·2^TW_SHIFT)
//   PAD_SHIFT    rows: local element p lives at p + (p >> PAD_SHIFT), which spreads the stride-R stores of the
//                early passes over the banks
//   VMAX         registers per work-item: the largest K·R of the passes
//   BLUESTEIN    1: the whole of Bluestein's algorithm for lines of length N_IN (N ≥ 2·N_IN − 1): load x·chirp
//                zero-padded to N, transform, multiply by hat (the transformed conjugate chirp, × 1/N) and
//                conjugate, transform again (the inverse transform as conj ∘ forward ∘ conj), store the first N_IN
//                results conjugated × chirp · scale. One read and one write of the data instead of five launches.
//
// Work-item t of a line owns, in a pass of radix R over m = N/R butterflies, butterflies j = t + k·TPL (k < K =
// ⌈m/TPL⌉): it reads x[j + r·m], twiddles by ω_N^{r·(j mod ns)·N/(ns·R)}, transforms, and writes the Stockham
// positions (j / ns)·ns·R + j mod ns + r·ns. The first pass reads global memory and the last writes it; both
// touch x[j + r·m], consecutive across work-items.
//
// Line l's element e is read at in_base + e·in_s with in_base = (l / in_q)·in_p + l mod in_q, and written at
// out_base + e·out_s likewise: [outer, N, inner] in and out, or a four-step's transposed output.

// ω_n^x from the four-step's two short tables (one table of n roots is read at scattered places).
inline T four_step_twiddle(global const T* tw_roots, IDX x, int inverse) {
    return MUL(twiddle(tw_roots, x & ((1u << TW_SHIFT) - 1u), inverse),
               twiddle(tw_roots, (IDX)(1u << TW_SHIFT) + (x >> TW_SHIFT), inverse));
}

#if SPLIT
typedef R LT;
#else
typedef T LT;
#endif

#if COLUMNS
#define LIDX(p) ((p) * C + c)
#define LOCAL_SIZE (N * C)
#else
#define LIDX(p) (c * (N + (N >> PAD_SHIFT)) + (p) + ((p) >> PAD_SHIFT))
#define LOCAL_SIZE (C * (N + (N >> PAD_SHIFT)))
#endif

#if BLUESTEIN
#define LOAD_VALUE(e) ((e) < N_IN ? MUL(src[in_base + (IDX)(e) * in_s], chirp[e]) : ZERO)
#define FINAL_VALUE(x, e) (MUL(CONJ(x), chirp[e]) * scale)
#define STORED(e) ((e) < N_IN)
#else
#define LOAD_VALUE(e) src[in_base + (IDX)(e) * in_s]
#define FINAL_VALUE(x, e) ((x) * scale)
#define STORED(e) 1
#endif

// The first pass: R inputs per butterfly from global memory.
#define PASS_LOAD_GLOBAL(RAD, M, K, GUARD) \
    _Pragma("unroll") for (uint k = 0; k < K; k++) { \
        uint j = t + k * TPL; \
        _Pragma("unroll") for (uint r = 0; r < RAD; r++) { \
            v[k * RAD + r] = live && (!GUARD || j < M) ? LOAD_VALUE(j + r * M) : ZERO; \
        } \
    }

// Bluestein, between its two transforms: the results (at natural positions e = j + r·m after the last pass)
// times hat, conjugated.
#define PASS_BLUESTEIN_MID(RAD, M, K) \
    _Pragma("unroll") for (uint k = 0; k < K; k++) { \
        uint j = t + k * TPL; \
        _Pragma("unroll") for (uint r = 0; r < RAD; r++) { \
            uint e = (j + r * M) % N; \
            v[k * RAD + r] = CONJ(MUL(v[k * RAD + r], hat[e])); \
        } \
    }

// Twiddles (none in the first pass, ns = 1) and the butterflies.
#define PASS_COMPUTE(RAD, NS, K) \
    _Pragma("unroll") for (uint k = 0; k < K; k++) { \
        uint j = t + k * TPL; \
        if (NS > 1) { \
            uint jns = j % NS; \
            _Pragma("unroll") for (uint r = 1; r < RAD; r++) { \
                v[k * RAD + r] = MUL(v[k * RAD + r], twiddle(roots, r * jns * (N / (NS * RAD)), INVERSE)); \
            } \
        } \
        dft##RAD(v + k * RAD, INVERSE); \
    }

// The Stockham stores of a pass into local memory (PART: `.x`, `.y`, or nothing for whole elements).
#define PASS_STORE_LOCAL(RAD, M, NS, K, GUARD, PART) \
    _Pragma("unroll") for (uint k = 0; k < K; k++) { \
        uint j = t + k * TPL; \
        if (!GUARD || j < M) { \
            uint p = (j / NS) * NS * RAD + j % NS; \
            _Pragma("unroll") for (uint r = 0; r < RAD; r++) buf[LIDX(p + r * NS)] = v[k * RAD + r] PART; \
        } \
    }

// The next pass's inputs from local memory.
#define PASS_LOAD_LOCAL(RAD, M, K, GUARD, PART) \
    _Pragma("unroll") for (uint k = 0; k < K; k++) { \
        uint j = t + k * TPL; \
        if (!GUARD || j < M) { \
            _Pragma("unroll") for (uint r = 0; r < RAD; r++) v[k * RAD + r] PART = buf[LIDX(j + r * M)]; \
        } \
    }

// The last pass: results to global memory, scaled (and twiddled for a four-step's first part).
#define PASS_STORE_GLOBAL(RAD, M, K, GUARD) \
    if (live) { \
        _Pragma("unroll") for (uint k = 0; k < K; k++) { \
            uint j = t + k * TPL; \
            if (!GUARD || j < M) { \
                _Pragma("unroll") for (uint r = 0; r < RAD; r++) { \
                    uint e = j + r * M; \
                    T y = FINAL_VALUE(v[k * RAD + r], e); \
                    if (TWIDDLE_OUT) y = MUL(y, four_step_twiddle(tw_roots, tw_row * e, INVERSE)); \
                    if (STORED(e)) dst[out_base + (IDX)e * out_s] = y; \
                } \
            } \
        } \
    }

#if SPLIT
#define PASS_EXCHANGE(RAD, M, NS, K, GUARD, RAD2, M2, K2, GUARD2) \
    barrier(CLK_LOCAL_MEM_FENCE); \
    PASS_STORE_LOCAL(RAD, M, NS, K, GUARD, .x) \
    barrier(CLK_LOCAL_MEM_FENCE); \
    PASS_LOAD_LOCAL(RAD2, M2, K2, GUARD2, .x) \
    barrier(CLK_LOCAL_MEM_FENCE); \
    PASS_STORE_LOCAL(RAD, M, NS, K, GUARD, .y) \
    barrier(CLK_LOCAL_MEM_FENCE); \
    PASS_LOAD_LOCAL(RAD2, M2, K2, GUARD2, .y)
#else
#define PASS_EXCHANGE(RAD, M, NS, K, GUARD, RAD2, M2, K2, GUARD2) \
    barrier(CLK_LOCAL_MEM_FENCE); \
    PASS_STORE_LOCAL(RAD, M, NS, K, GUARD, ) \
    barrier(CLK_LOCAL_MEM_FENCE); \
    PASS_LOAD_LOCAL(RAD2, M2, K2, GUARD2, )
#endif

kernel __attribute__((reqd_work_group_size(C * TPL, 1, 1))) void fft_lines(
    global const T* restrict src, global T* restrict dst, global const T* restrict roots, IDX lines, IDX in_q,
    IDX in_p, IDX in_s, IDX out_q, IDX out_p, IDX out_s, R scale, global const T* restrict tw_roots, IDX tw_n2,
    IDX tw_inner, global const T* restrict chirp, global const T* restrict hat) {
    const uint lid = get_local_id(0);
#if COLUMNS
    const uint c = lid % C, t = lid / C;
#else
    const uint c = lid / TPL, t = lid % TPL;
#endif
    const IDX l = (IDX)get_group_id(0) * C + c;
    const bool live = l < lines;
    const IDX in_base = (l / in_q) * in_p + l % in_q;
    const IDX out_base = (l / out_q) * out_p + l % out_q;
    const IDX tw_row = TWIDDLE_OUT ? (l / tw_inner) % tw_n2 : 0;
    local LT buf[LOCAL_SIZE];
    T v[VMAX];
    FFT_PASSES
}

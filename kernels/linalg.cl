// Matrix products C = alpha·op(A)·op(B) + beta·C, batched. Prepended by common.cl. The host hands over op(A)
// and op(B) as strided views (a transpose is a swap of strides), so the kernels see A' [M, K] with strides
// (sam, sak), B' [K, N] with (sbk, sbn) and C [M, N] with (scm, scn), plus up to 8 batch axes whose strides
// are 0 where an operand is broadcast. Build options:
//   MWG, NWG, KWG    work-group tile: MWG rows × NWG columns of C, KWG-deep slices of A' and B' per step
//   MDIMC, NDIMC     work-group shape: NDIMC work-items along N (dimension 0), MDIMC along M (dimension 1);
//                    each work-item owns (MWG/MDIMC) × (NWG/NDIMC) outputs, strided by MDIMC and NDIMC so that
//                    neighbouring work-items read neighbouring local-memory words
//   A_K_FAST         1 when A' is contiguous along K (sak == 1): the tile loader then walks K fastest so that
//                    the global reads are coalesced; 0 walks M fastest
//   B_N_FAST         1 when B' is contiguous along N: the loader walks N fastest; 0 walks K fastest
//   A_K_UNIT …       1 where a stride is 1 (A along K or M, B along N or K, C along N)

// Unit strides known at build time (A_K_UNIT, A_M_UNIT, B_N_UNIT, B_K_UNIT, C_N_UNIT) become constants, so
// the compiler can drop multiplies and, on CPUs, vectorise the loads.
#if A_K_UNIT
#define SAK ((IDX)1)
#else
#define SAK sak
#endif
#if A_M_UNIT
#define SAM ((IDX)1)
#else
#define SAM sam
#endif
#if B_N_UNIT
#define SBN ((IDX)1)
#else
#define SBN sbn
#endif
#if B_K_UNIT
#define SBK ((IDX)1)
#else
#define SBK sbk
#endif
#if C_N_UNIT
#define SCN ((IDX)1)
#else
#define SCN scn
#endif

// conj_a, conj_b: kernel arguments (uniform branches), so conjugation does not multiply the programs to build.
#if IS_COMPLEX
#define OP_A(v) (conj_a ? CONJ(v) : (v))
#define OP_B(v) (conj_b ? CONJ(v) : (v))
#else
#define OP_A(v) (v)
#define OP_B(v) (v)
#endif

#if B_CONV
// B as the patches of a filter bank's input, gathered where gemm_tiled and gemm_tmma load them (an implicit GEMM: no
// unrolled matrix in memory). Row k of B is (channel c, filter row r, column s) and column n is output pixel
// (p, q); B[k][n] = x[c][p·SH + r'·DH − PH][q·SW + s'·DW − PW] with (r', s') flipped for a convolution, and
// CONV_VALUE outside the image (a constant border). Geometry and the input's strides (CONV_XC, CONV_XH,
// CONV_XW; the image stride is the batch stride of B) are build options, so the divisions are by constants.
inline T conv_patch(__global const T* x, IDX k, IDX n)
{
    const uint c = (uint)(k / (CONV_R * CONV_S)), rs = (uint)(k % (CONV_R * CONV_S));
    const uint r = rs / CONV_S, s = rs % CONV_S;
    const uint p = (uint)(n / CONV_Q), q = (uint)(n % CONV_Q);
    const int rr = CONV_FLIP ? CONV_R - 1 - (int)r : (int)r, ss = CONV_FLIP ? CONV_S - 1 - (int)s : (int)s;
    const int ih = (int)p * CONV_SH + rr * CONV_DH - CONV_PH, iw = (int)q * CONV_SW + ss * CONV_DW - CONV_PW;
    return (ih >= 0 && ih < CONV_H && iw >= 0 && iw < CONV_W)
               ? x[(IDX)c * CONV_XC + (IDX)ih * CONV_XH + (IDX)iw * CONV_XW]
               : FROM_REAL(CONV_VALUE);
}
#define B_READ(k, n) conv_patch(bp, (k), (n))
#else
#define B_READ(k, n) bp[(k) * SBK + (n) * SBN]
#endif

// C = alpha·acc (+ beta·C when use_beta): with beta = 0 the old C is never read, so NaNs in an uninitialised
// output do not leak into the result (BLAS semantics).
#define STORE(c, idx, acc) \
    do { \
        T r_ = MUL(alpha, acc); \
        if (use_beta) r_ += MUL(beta, c[idx]); \
        c[idx] = r_; \
    } while (0)

#ifdef MWG
#define THREADS (MDIMC * NDIMC)
#define WPTM (MWG / MDIMC)
#define WPTN (NWG / NDIMC)

// A work-item's WPTM × WPTN block of accumulators: cleared, updated with the outer product of a column of A'
// and a row of B', and stored (within M × N) at rows ROW(i) and columns COL(j) of C.
#define CLEAR_BLOCK(acc) \
    _Pragma("unroll") for (uint i = 0; i < WPTM; i++) { \
        _Pragma("unroll") for (uint j = 0; j < WPTN; j++) acc[i][j] = ZERO; \
    }
// acc += a·b as multiply-adds the compiler fuses (OpenCL contracts a*b + c by default); the complex form is
// four real multiply-adds rather than a product then a sum.
#if IS_COMPLEX
#define MAC(acc, a, b) \
    do { \
        acc.x += a.x * b.x; \
        acc.x -= a.y * b.y; \
        acc.y += a.x * b.y; \
        acc.y += a.y * b.x; \
    } while (0)
#else
#define MAC(acc, a, b) acc += a * b
#endif
#define STORE_BLOCK(cp, acc, ROW, COL) \
    _Pragma("unroll") for (uint i = 0; i < WPTM; i++) { \
        const IDX gm = ROW(i); \
        _Pragma("unroll") for (uint j = 0; j < WPTN; j++) { \
            const IDX gn = COL(j); \
            if (gm < M && gn < N) STORE(cp, gm * scm + gn * SCN, acc[i][j]); \
        } \
    }

// The local-memory kernel (GPUs). Build options beyond the tile sizes:
//   VWM, VWN    a work-item's rows (columns) come in runs of VWM (VWN) neighbours, MDIMC·VWM (NDIMC·VWN) apart,
//               read from local memory as one VTM (VTN) vector: with float4 a 128-bit load feeds four rows
//   VTM, VTN    the vector types of VWM and VWN elements of T (float4, double2, float4 for two float2 …)
// Each work-group computes an MWG × NWG block of C, stepping through K in KWG-deep slices. The slices live in
// two local buffers: while the work-items multiply out one, the next is already on its way from global memory
// into registers and is stored into the other buffer afterwards, so one barrier per slice suffices and the
// global loads' latency hides behind the arithmetic. Edge tiles (M, N or K not multiples of the tile) are
// handled by guarded loads that fill zeros and guarded stores.
#ifndef VWM
#define VWM 1
#define VTM T
#endif
#ifndef VWN
#define VWN 1
#define VTN T
#endif
// Rows of the local A slice (KWG rows of MWG + padding) and of B. A slice filled across its rows (A read along
// K, B along K) gets VW elements of padding: the stores of one load step then fall into distinct banks, and
// the rows stay aligned for the vector reads.
#define LDA (MWG + (A_K_FAST ? VWM : 0))
#define LDB (NWG + (B_N_FAST ? 0 : VWN))
#define A_LOADS (MWG * KWG / THREADS)
#define B_LOADS (NWG * KWG / THREADS)
typedef union { VTM v; T s[VWM]; } a_run;
typedef union { VTN v; T s[VWN]; } b_run;
// Row (column) of the work-group tile holding a work-item's i-th output row (j-th column).
#define RUN_ROW(tm, i) (((i) / VWM) * (MDIMC * VWM) + (tm) * VWM + (i) % VWM)
#define RUN_COL(tn, j) (((j) / VWN) * (NDIMC * VWN) + (tn) * VWN + (j) % VWN)


__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void gemm_tiled(__global const T* restrict a, IDX a_off, IDX sam, IDX sak,
                __global const T* restrict b, IDX b_off, IDX sbk, IDX sbn,
                __global T* c, IDX c_off, IDX scm, IDX scn,
                IDX M, IDX N, IDX K, uint conj_a, uint conj_b, T alpha, T beta, uint use_beta,
                uint nd, ulong8 shape, ulong8 batch_a, ulong8 batch_b, ulong8 batch_c)
{
    __local VTM a_slices[2 * KWG * LDA / VWM];
    __local VTN b_slices[2 * KWG * LDB / VWN];
    __local T* a_elems = (__local T*)a_slices;
    __local T* b_elems = (__local T*)b_slices;
    const uint tn = get_local_id(0), tm = get_local_id(1);
    const uint tid = tm * NDIMC + tn;
    const IDX m0 = (IDX)get_group_id(1) * MWG, n0 = (IDX)get_group_id(0) * NWG;
    IDX oa = 0, ob = 0, oc = 0;
    if (nd > 0) batch_offsets3((IDX)get_global_id(2), nd, shape, batch_a, batch_b, batch_c, &oa, &ob, &oc);
    __global const T* ap = a + a_off + oa;
    __global const T* bp = b + b_off + ob;

    // Where load l of this work-item sits in the slice: (row along M or N, depth along K). The loaders walk
    // the operand's contiguous axis fastest, so that neighbouring work-items read neighbouring addresses.
#if A_K_FAST
#define A_AT(l, mm, kk) const uint e_ = tid + (l) * THREADS, kk = e_ % KWG, mm = e_ / KWG
#else
#define A_AT(l, mm, kk) const uint e_ = tid + (l) * THREADS, mm = e_ % MWG, kk = e_ / MWG
#endif
#if B_N_FAST
#define B_AT(l, nn, kk) const uint e_ = tid + (l) * THREADS, nn = e_ % NWG, kk = e_ / NWG
#else
#define B_AT(l, nn, kk) const uint e_ = tid + (l) * THREADS, kk = e_ % KWG, nn = e_ / KWG
#endif
    T next_a[A_LOADS], next_b[B_LOADS];
// The next slice into registers. Tiles wholly inside M × N × K (the uniform `inside` flag) load without
// guards; the others fill zeros past the edges.
#define FETCH_SLICE(k0, inside) \
    do { \
        if (inside) { \
            _Pragma("unroll") for (uint l = 0; l < A_LOADS; l++) { \
                A_AT(l, mm, kk); \
                next_a[l] = OP_A(ap[(m0 + mm) * SAM + ((k0) + kk) * SAK]); \
            } \
            _Pragma("unroll") for (uint l = 0; l < B_LOADS; l++) { \
                B_AT(l, nn, kk); \
                next_b[l] = OP_B(B_READ((k0) + kk, n0 + nn)); \
            } \
        } else { \
            _Pragma("unroll") for (uint l = 0; l < A_LOADS; l++) { \
                A_AT(l, mm, kk); \
                const IDX gm = m0 + mm, gk = (k0) + kk; \
                next_a[l] = (gm < M && gk < K) ? OP_A(ap[gm * SAM + gk * SAK]) : ZERO; \
            } \
            _Pragma("unroll") for (uint l = 0; l < B_LOADS; l++) { \
                B_AT(l, nn, kk); \
                const IDX gn = n0 + nn, gk = (k0) + kk; \
                next_b[l] = (gn < N && gk < K) ? OP_B(B_READ(gk, gn)) : ZERO; \
            } \
        } \
    } while (0)
#define STASH_SLICE(buf) \
    do { \
        _Pragma("unroll") for (uint l = 0; l < A_LOADS; l++) { \
            A_AT(l, mm, kk); \
            a_elems[((buf) * KWG + kk) * LDA + mm] = next_a[l]; \
        } \
        _Pragma("unroll") for (uint l = 0; l < B_LOADS; l++) { \
            B_AT(l, nn, kk); \
            b_elems[((buf) * KWG + kk) * LDB + nn] = next_b[l]; \
        } \
    } while (0)

    T acc[WPTM][WPTN];
    CLEAR_BLOCK(acc);

    const IDX slices = (K + KWG - 1) / KWG;
    const bool inside_mn = m0 + MWG <= M && n0 + NWG <= N;
    FETCH_SLICE((IDX)0, inside_mn && KWG <= K);
    STASH_SLICE(0u);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (IDX s = 0; s < slices; s++) {
        const uint buf = (uint)(s & 1);
        if (s + 1 < slices) FETCH_SLICE((s + 1) * KWG, inside_mn && (s + 2) * KWG <= K);
        __local const VTM* as = a_slices + buf * (KWG * LDA / VWM) + tm;
        __local const VTN* bs = b_slices + buf * (KWG * LDB / VWN) + tn;
        #pragma unroll
        for (uint kk = 0; kk < KWG; kk++) {
            a_run ar[WPTM / VWM];
            b_run br[WPTN / VWN];
            #pragma unroll
            for (uint g = 0; g < WPTM / VWM; g++) ar[g].v = as[kk * (LDA / VWM) + g * MDIMC];
            #pragma unroll
            for (uint g = 0; g < WPTN / VWN; g++) br[g].v = bs[kk * (LDB / VWN) + g * NDIMC];
            #pragma unroll
            for (uint i = 0; i < WPTM; i++) {
                #pragma unroll
                for (uint j = 0; j < WPTN; j++) MAC(acc[i][j], ar[i / VWM].s[i % VWM], br[j / VWN].s[j % VWN]);
            }
        }
        // The other buffer was last read in the previous step, which every work-item finished before the
        // barrier that ended it.
        if (s + 1 < slices) STASH_SLICE(buf ^ 1u);
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    __global T* cp = c + c_off + oc;
#define TILED_ROW(i) (m0 + RUN_ROW(tm, i))
#define TILED_COL(j) (n0 + RUN_COL(tn, j))
    STORE_BLOCK(cp, acc, TILED_ROW, TILED_COL);
}

// The register-blocked kernel without local memory, for CPUs: each work-item accumulates the same
// WPTM × WPTN outputs as in gemm_tiled, reading A and B straight from global memory (the caches do the
// staging there). PoCL keeps every value that is live across a barrier in memory, so with barriers each
// accumulator would be spilled at every K step; without them the accumulators stay in registers.
__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void gemm_blocked(__global const T* restrict a, IDX a_off, IDX sam, IDX sak,
                  __global const T* restrict b, IDX b_off, IDX sbk, IDX sbn,
                  __global T* c, IDX c_off, IDX scm, IDX scn,
                  IDX M, IDX N, IDX K, uint conj_a, uint conj_b, T alpha, T beta, uint use_beta,
                  uint nd, ulong8 shape, ulong8 batch_a, ulong8 batch_b, ulong8 batch_c)
{
    const uint tn = get_local_id(0), tm = get_local_id(1);
    // Each work-item owns WPTN neighbouring columns, so the compiler can keep a row of accumulators in one
    // vector register and load B's row segment as one vector.
    const IDX m0 = (IDX)get_group_id(1) * MWG + tm * WPTM, n0 = (IDX)get_group_id(0) * NWG + tn * WPTN;
    IDX oa = 0, ob = 0, oc = 0;
    if (nd > 0) batch_offsets3((IDX)get_global_id(2), nd, shape, batch_a, batch_b, batch_c, &oa, &ob, &oc);
    __global const T* ap = a + a_off + oa;
    __global const T* bp = b + b_off + ob;
    T acc[WPTM][WPTN];
    CLEAR_BLOCK(acc);
    // ROW(i) and COL(j) give the element offsets of the work-item's rows of A and columns of B.
#define BLOCKED_LOOP(ROW, COL) \
    for (IDX k = 0; k < K; k++) { \
        T ar[WPTM], br[WPTN]; \
        _Pragma("unroll") for (uint i = 0; i < WPTM; i++) ar[i] = OP_A(ap[ROW(i) + k * SAK]); \
        _Pragma("unroll") for (uint j = 0; j < WPTN; j++) br[j] = OP_B(bp[k * SBK + COL(j)]); \
        _Pragma("unroll") for (uint i = 0; i < WPTM; i++) { \
            _Pragma("unroll") for (uint j = 0; j < WPTN; j++) MAC(acc[i][j], ar[i], br[j]); \
        } \
    }
#define INNER_ROW(i) ((m0 + (i)) * SAM)
#define INNER_COL(j) ((n0 + (j)) * SBN)
// Past the edge, rows and columns read row or column 0 instead (always valid); those outputs are not stored.
#define EDGE_ROW(i) ((m0 + (i) < M ? m0 + (i) : 0) * SAM)
#define EDGE_COL(j) ((n0 + (j) < N ? n0 + (j) : 0) * SBN)
    if (m0 + WPTM <= M && n0 + WPTN <= N) {
        BLOCKED_LOOP(INNER_ROW, INNER_COL)
    } else {
        BLOCKED_LOOP(EDGE_ROW, EDGE_COL)
    }
    __global T* cp = c + c_off + oc;
#define BLOCKED_ROW(i) (m0 + (i))
#define BLOCKED_COL(j) (n0 + (j))
    STORE_BLOCK(cp, acc, BLOCKED_ROW, BLOCKED_COL);
}
#endif

#if DMMA || TMMA
// The local slot of row (column) mm of a tile: each lane's two rows g and g + 8 of a 16-row MMA tile (its
// columns of two neighbouring 8-column tiles) side by side, so one 16-byte read fetches two fragments.
#define DM_A_SLOT(mm) (((mm) & ~15u) | (((mm) & 7u) << 1) | (((mm) >> 3) & 1u))
#define DM_B_SLOT(nn) (((nn) & ~15u) | (((nn) & 7u) << 1) | (((nn) >> 3) & 1u))
// acc{0..3} += a{0,1} · b (one m16n8k4 tile). Fragments: lane = 4·g + t; a0 = A[g][t], a1 = A[g + 8][t],
// b = B[t][g]; c0, c1 = C[g][2t], C[g][2t + 1]; c2, c3 the same in row g + 8.
// A work-item's place in a tensor-core group of 2 × 4 warps: its lane's quad g and place t in it, its warp's
// corner (wm, wn) of warp tiles WROWS × WCOLS, the group's corner (m0, n0) of BM × BN, and the batch entry's
// operands ap, bp (elements of E) and C's offset oc.
#define MMA_PLACE(E, BM, BN, WROWS, WCOLS) \
    const uint tid = get_local_id(0), lane = tid & 31, warp = tid >> 5; \
    const uint g = lane >> 2, t = lane & 3; \
    const uint wm = (warp >> 2) * (WROWS), wn = (warp & 3) * (WCOLS); \
    const IDX m0 = (IDX)get_group_id(1) * (BM), n0 = (IDX)get_group_id(0) * (BN); \
    IDX oa = 0, ob = 0, oc = 0; \
    if (nd > 0) batch_offsets3((IDX)get_global_id(2), nd, shape, batch_a, batch_b, batch_c, &oa, &ob, &oc); \
    __global const E* ap = a + a_off + oa; \
    __global const E* bp = b + b_off + ob
#define DMMA_TILE(c, a0, a1, b) \
    asm("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};" \
        : "+d"((c)[0]), "+d"((c)[1]), "+d"((c)[2]), "+d"((c)[3]) : "d"(a0), "d"(a1), "d"(b))
// The slice loop of gemm_dmma and gemm_tmma. FETCH(s, ra, rb) loads slice s of K into registers, STASH(buf, ra, rb)
// stores them in local buffer buf, MULTIPLY(buf) runs the MMAs of that buffer; the kernel declares the two
// register sets a0r/b0r and a1r/b1r and `slices`. The loop runs two slices per turn, so that the slice after
// next is in flight while one is multiplied: slice s in buffer 0 and slice s + 1 in set 1 at its start; a
// buffer is refilled only after the barrier that ends the last reads of it.
#define MMA_SLICE_LOOP(FETCH, STASH, MULTIPLY) \
    do { \
        FETCH((IDX)0, a0r, b0r); \
        STASH(0u, a0r, b0r); \
        if (slices > 1) FETCH((IDX)1, a1r, b1r); \
        barrier(CLK_LOCAL_MEM_FENCE); \
        for (IDX s = 0; s < slices; s += 2) { \
            if (s + 2 < slices) FETCH(s + 2, a0r, b0r); \
            MULTIPLY(0u); \
            if (s + 1 < slices) STASH(1u, a1r, b1r); \
            barrier(CLK_LOCAL_MEM_FENCE); \
            if (s + 1 >= slices) break; \
            if (s + 3 < slices) FETCH(s + 3, a1r, b1r); \
            MULTIPLY(1u); \
            if (s + 2 < slices) STASH(0u, a0r, b0r); \
            barrier(CLK_LOCAL_MEM_FENCE); \
        } \
    } while (0)

#endif

#if DMMA
// Real double-precision products on the FP64 tensor cores of NVIDIA GPUs from sm_80 (A100, H100), through
// inline PTX: `mma.sync.aligned.m16n8k4.row.col.f64` is a warp-wide 16×8×4 multiply-add in IEEE FP64 (fused
// multiply-adds, so the error bound of the FFMA kernels holds). Built only where the planner found such a
// device (`-DDMMA=1`); every other device keeps gemm_tiled.
//
// A 256-work-item group (8 warps, 2 along M × 4 along N) computes a 128 × 128 block of C; each warp a 64 × 32
// block as 4 × 4 MMA tiles (64 accumulators per work-item, 218 registers, no spills). K advances in 8-deep
// slices through two local buffers (A' as [k][m], B' as [k][n], rows of 132 doubles). Each lane's two A rows
// (g and g + 8 of a 16-row tile) and its columns of two neighbouring 8-column B tiles sit side by side, so one
// 16-byte read fetches two fragments, and the reads of a quarter-warp (4 k-rows × 2 pairs) fall in distinct
// banks. The slice after next is fetched into registers while the current one is multiplied (two register sets,
// MMA_SLICE_LOOP), one barrier per slice.
// Measured on the H200 at 4096³ (cuBLAS 61–62 TF/s in the same calls): 42.7 TF/s fetching one slice ahead;
// without any global loads the loop reaches 56 TF/s, so the loads' latency was not hidden. cp.async (8-byte
// copies, no registers on the way) measured 33 TF/s, deeper slices with one buffer (16 deep) 41.6, and the
// m16n8k8 shape (half the MMA instructions, 254 registers) 41.7; fetching two slices ahead gives 45.0.
#define DM_BM 128
#define DM_BN 128
#define DM_BK 8
#define DM_LD 132
#define DM_THREADS 256
#define DM_LOADS (DM_BM * DM_BK / DM_THREADS)

__kernel __attribute__((reqd_work_group_size(DM_THREADS, 1, 1)))
void gemm_dmma(__global const double* restrict a, IDX a_off, IDX sam, IDX sak,
               __global const double* restrict b, IDX b_off, IDX sbk, IDX sbn,
               __global double* c, IDX c_off, IDX scm, IDX scn,
               IDX M, IDX N, IDX K, uint conj_a, uint conj_b, double alpha, double beta, uint use_beta,
               uint nd, ulong8 shape, ulong8 batch_a, ulong8 batch_b, ulong8 batch_c)
{
    // Declared as double2 so that the 16-byte fragment reads are aligned.
    __local double2 a_pairs[DM_BK * DM_LD], b_pairs[DM_BK * DM_LD];
    __local double* a_tile = (__local double*)a_pairs;
    __local double* b_tile = (__local double*)b_pairs;
    MMA_PLACE(double, DM_BM, DM_BN, 64, 32);

    // Where load l of this work-item sits in the slice, walking the operand's contiguous axis fastest.
#if DM_VEC_A
// Pairs of neighbours along K, read as one 16-byte load when the slice lies inside A (A' K-contiguous with
// even row strides and offsets, which the host checks): loads 2p and 2p + 1 are the pair's two elements.
#define DA_AT(l, mm, kk) \
    const uint e_ = tid + ((l) >> 1) * DM_THREADS, kk = (e_ % (DM_BK / 2)) * 2 + ((l) & 1), mm = e_ / (DM_BK / 2)
#elif A_K_FAST
#define DA_AT(l, mm, kk) const uint e_ = tid + (l) * DM_THREADS, kk = e_ % DM_BK, mm = e_ / DM_BK
#else
#define DA_AT(l, mm, kk) const uint e_ = tid + (l) * DM_THREADS, mm = e_ % DM_BM, kk = e_ / DM_BM
#endif
#if DM_VEC_B
#define DB_AT(l, nn, kk) \
    const uint e_ = tid + ((l) >> 1) * DM_THREADS, nn = (e_ % (DM_BN / 2)) * 2 + ((l) & 1), kk = e_ / (DM_BN / 2)
#elif B_N_FAST
#define DB_AT(l, nn, kk) const uint e_ = tid + (l) * DM_THREADS, nn = e_ % DM_BN, kk = e_ / DM_BN
#else
#define DB_AT(l, nn, kk) const uint e_ = tid + (l) * DM_THREADS, kk = e_ % DM_BK, nn = e_ / DM_BK
#endif
    // A slice inside the matrices: pairs as 16-byte loads where the layout allows, else element by element.
#if DM_VEC_A
#define DM_LOAD_A(k0, ra) \
    _Pragma("unroll") for (uint l = 0; l < DM_LOADS; l += 2) { \
        DA_AT(l, mm, kk); \
        const double2 v_ = *(__global const double2*)(ap + (m0 + mm) * SAM + ((k0) + kk)); \
        ra[l] = v_.x; \
        ra[l + 1] = v_.y; \
    }
#else
#define DM_LOAD_A(k0, ra) \
    _Pragma("unroll") for (uint l = 0; l < DM_LOADS; l++) { \
        DA_AT(l, mm, kk); \
        ra[l] = ap[(m0 + mm) * SAM + ((k0) + kk) * SAK]; \
    }
#endif
#if DM_VEC_B
#define DM_LOAD_B(k0, rb) \
    _Pragma("unroll") for (uint l = 0; l < DM_LOADS; l += 2) { \
        DB_AT(l, nn, kk); \
        const double2 v_ = *(__global const double2*)(bp + ((k0) + kk) * SBK + (n0 + nn)); \
        rb[l] = v_.x; \
        rb[l + 1] = v_.y; \
    }
#else
#define DM_LOAD_B(k0, rb) \
    _Pragma("unroll") for (uint l = 0; l < DM_LOADS; l++) { \
        DB_AT(l, nn, kk); \
        rb[l] = bp[((k0) + kk) * SBK + (n0 + nn) * SBN]; \
    }
#endif
    // Slice s of K into the registers ra, rb: unguarded inside the matrices, zeros past their edges.
#define DM_FETCH(s, ra, rb) \
    do { \
        const IDX k0_ = (s) * DM_BK; \
        if (inside_mn && k0_ + DM_BK <= K) { \
            DM_LOAD_A(k0_, ra); \
            DM_LOAD_B(k0_, rb); \
        } else { \
            _Pragma("unroll") for (uint l = 0; l < DM_LOADS; l++) { \
                DA_AT(l, mm, kk); \
                const IDX gm = m0 + mm, gk = k0_ + kk; \
                ra[l] = (gm < M && gk < K) ? ap[gm * SAM + gk * SAK] : 0.0; \
            } \
            _Pragma("unroll") for (uint l = 0; l < DM_LOADS; l++) { \
                DB_AT(l, nn, kk); \
                const IDX gn = n0 + nn, gk = k0_ + kk; \
                rb[l] = (gn < N && gk < K) ? bp[gk * SBK + gn * SBN] : 0.0; \
            } \
        } \
    } while (0)
#define DM_STASH(buf, ra, rb) \
    do { \
        _Pragma("unroll") for (uint l = 0; l < DM_LOADS; l++) { \
            DA_AT(l, mm, kk); \
            a_tile[((buf) * DM_BK + kk) * DM_LD + DM_A_SLOT(mm)] = ra[l]; \
        } \
        _Pragma("unroll") for (uint l = 0; l < DM_LOADS; l++) { \
            DB_AT(l, nn, kk); \
            b_tile[((buf) * DM_BK + kk) * DM_LD + DM_B_SLOT(nn)] = rb[l]; \
        } \
    } while (0)
    // The MMAs of the slice in local buffer buf.
#define DM_MULTIPLY(buf) \
    do { \
        __local const double* as = a_tile + (buf) * DM_BK * DM_LD + wm + 2 * g; \
        __local const double* bs = b_tile + (buf) * DM_BK * DM_LD + wn + 2 * g; \
        _Pragma("unroll") for (uint k4 = 0; k4 < DM_BK; k4 += 4) { \
            double2 af[4], bf[2]; \
            _Pragma("unroll") for (uint i = 0; i < 4; i++) af[i] = *(__local const double2*)(as + (k4 + t) * DM_LD + i * 16); \
            _Pragma("unroll") for (uint j = 0; j < 2; j++) bf[j] = *(__local const double2*)(bs + (k4 + t) * DM_LD + j * 16); \
            _Pragma("unroll") for (uint i = 0; i < 4; i++) { \
                DMMA_TILE(acc[i][0], af[i].x, af[i].y, bf[0].x); \
                DMMA_TILE(acc[i][1], af[i].x, af[i].y, bf[0].y); \
                DMMA_TILE(acc[i][2], af[i].x, af[i].y, bf[1].x); \
                DMMA_TILE(acc[i][3], af[i].x, af[i].y, bf[1].y); \
            } \
        } \
    } while (0)

    double acc[4][4][4];
    _Pragma("unroll") for (uint i = 0; i < 4; i++) {
        _Pragma("unroll") for (uint j = 0; j < 4; j++) {
            _Pragma("unroll") for (uint r = 0; r < 4; r++) acc[i][j][r] = 0.0;
        }
    }
    const IDX slices = (K + DM_BK - 1) / DM_BK;
    const bool inside_mn = m0 + DM_BM <= M && n0 + DM_BN <= N;
    double a0r[DM_LOADS], b0r[DM_LOADS], a1r[DM_LOADS], b1r[DM_LOADS];
    MMA_SLICE_LOOP(DM_FETCH, DM_STASH, DM_MULTIPLY);

    __global double* cp = c + c_off + oc;
    _Pragma("unroll") for (uint i = 0; i < 4; i++) {
        _Pragma("unroll") for (uint j = 0; j < 4; j++) {
            _Pragma("unroll") for (uint r = 0; r < 4; r++) {
                const IDX gm = m0 + wm + i * 16 + g + (r >> 1) * 8;
                const IDX gn = n0 + wn + j * 8 + 2 * t + (r & 1);
                if (gm < M && gn < N) {
                    double v = alpha * acc[i][j][r];
                    if (use_beta) v += beta * cp[gm * scm + gn * SCN];
                    cp[gm * scm + gn * SCN] = v;
                }
            }
        }
    }
}
#endif

#if TMMA || WGMMA
// x's TF32 head, rounded to nearest by an integer add on the magnitude's bits, so that the rest has either sign
// (truncated heads leave rests of x's sign, and the dropped lo·lo then biases every product toward zero). A NaN
// may lose its payload here, but its rest is NaN, so the products are NaN; ±∞ stays ±∞.
inline uint tf32_head(float x)
{
    return (as_uint(x) + 0x1000u) & 0xffffe000u;
}

// The rest x − hi after head hi, exact in FP32, times 2¹⁰ (exact too, and at most |x|: the products of rests
// stay as far from FP32's smallest normals as those of heads); 0 where hi is infinite.
inline uint tf32_rest(float x, uint hi)
{
    const float h = as_float(hi);
    return as_uint(isinf(h) ? 0.0f : (x - h) * 1024.0f);
}

// x rounded to TF32 to nearest, ties away from zero, by an integer add on the magnitude's bits (which carries
// into the exponent where it must; a finite x next to FLT_MAX becomes ∞); NaN kept as it is.
inline float tf32_nearest(float x)
{
    return isnan(x) ? x : as_float((as_uint(x) + 0x1000u) & 0xffffe000u);
}
#endif

#if TMMA
// Real single-precision products on the TF32 tensor cores of NVIDIA GPUs from sm_80, through inline PTX
// (`mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`: a warp-wide 16×8×8 product of TF32 operands with
// exact products and FP32 accumulation; the MMA reads the top 19 bits of each 32-bit operand, sign, exponent
// and 10 mantissa bits, and its accumulation truncates). Built only where MatMulParams::precision allows it
// and the device has the tensor cores; every other device keeps the FP32 kernels.
// - TM_SPLIT 0 (GemmPrecision::Tf32): operands rounded to TF32 to nearest (ties away) as they enter local
//   memory, one MMA per tile accumulating in place: at most 2⁻¹⁰ + 2⁻²² relative error per product term, and
//   the truncating accumulation biases sums of like-signed terms low (A¹⁰⁰ of a positive 4096² matrix: 2.8·10⁻³
//   from float64, where FP32 is 3.8·10⁻⁶; adding each MMA's result in FP32 instead gave 1.5·10⁻⁴ at 16 % less
//   speed, so Tf32 keeps the fast form).
// - TM_SPLIT 1 (GemmPrecision::Fp32Split, "3xTF32"): each operand x = hi + lo, hi = x rounded to TF32 by an
//   integer add, lo = x − hi exact in FP32 and scaled by 2¹⁰ (exact, at most |x|), split as the fragments are
//   read. Per tile: lo·hi and hi·lo accumulate in place in acc_rest (2¹⁰ larger than their share), and hi·hi
//   starts from zero and is added to acc in FP32 (round to nearest), so neither the truncation nor the dropped
//   lo·lo bias the sum: at most 3·2⁻²⁰ per product term, A¹⁰⁰ 4.3·10⁻⁶ from float64 (FP32: 3.8·10⁻⁶). Where
//   the head sum is not finite it is the result (an infinite head's lo is 0, but its cross products with the
//   other operand's rests are ±∞ of either sign). Measured
//   slower or more biased: truncated heads (rests of x's sign, so lo·lo biases every term: A¹⁰⁰ 3.4·10⁻⁵), hi·hi
//   accumulated in place (2.7·10⁻³), the split at the stash into two local planes, cvt.rna for the heads.
// A finite x within 2⁻¹² of f32's largest value rounds to ∞, as in every TF32 path.
// Measured on the H100 (cuBLAS in the same call: FP32 51.2–51.6 TF/s, TF32 411–433 through Hopper's wgmma,
// which gemm_wgmma below reaches through a PTX patch, on compute capability 9.x only): Tf32 88 / 100 / 104 TF/s at 2048³ / 4096³ / 8192³; Fp32Split 40.5 /
// 42.3 / 43.5, no faster than gemm_tiled's FFMA (40.0 / 41.6 / 42.6), so the planner does not take it (it takes
// gemm_wgmma's split on Hopper: H200 4096³ 79.5 TF/s). The split
// is bound by its per-element instructions and by occupancy (255 registers: 8 warps per SM).
//
// A 256-work-item group (8 warps, 2 along M × 4 along N) computes a TM_BM × TM_BN block of C (TM_BM 128, or 64
// with TM_MT 2 for few rows such as a filter bank's 64 filters; TM_BN 128 or 256); each warp a (16·TM_MT) ×
// (TM_BN / 4) block as TM_MT × TM_NT MMA tiles. With B_CONV the B loader gathers a filter bank's patches. K advances in 16-deep slices through two local
// buffers (48 KiB at TM_BN 256: the device's limit); the slice after next is fetched into registers (four
// neighbours along an operand's contiguous axis per load, one 16-byte load where the host found them aligned)
// while the current one is multiplied, as in gemm_dmma.
//
// Local layout: each lane reads a whole fragment with one 16-byte load.
// - A fragment of lane (g, t) for rows i·16.. and k-step q: a0 = A[g][t], a1 = A[g + 8][t], a2 = A[g][t + 4],
//   a3 = A[g + 8][t + 4]. Local row (q, t) of a slice holds, for every m, both k = 8q + t and 8q + t + 4,
//   ordered so that those four values sit at words 4g.. of the 32 words of tile i (TM_A_COL).
// - B fragment of lane (g, t) for columns j·8..: b0 = B[t][g], b1 = B[t + 4][g]. Row (q, t) holds two
//   neighbouring column tiles' fragments at 4g..: b0, b1 of tile 2p, then of tile 2p + 1 (TM_B_COL).
// - C: c0, c1 = C[g][2t], C[g][2t + 1]; c2, c3 the same in row g + 8 (as the FP64 shape).
// The rows are not padded (that would pass 48 KiB); instead word w of row (q, t) is stored at w ^ 8t
// (TM_SWIZZLE), so the eight lanes of a quarter-warp, t = 0..3 and g = 0, 1, read distinct banks.
// TM_MT 16-row MMA tiles per warp along M: 4 (128-row blocks) or 2 (64-row blocks, for few rows of C).
#ifndef TM_MT
#define TM_MT 4
#endif
#define TM_BM (32 * TM_MT)
#ifndef TM_BN
#define TM_BN 128
#endif
#define TM_BK 16
#define TM_THREADS 256
#define TM_NT (TM_BN / 32)
#define TM_ROWS (TM_BK / 2)
#define TM_LDA (2 * TM_BM)
#define TM_LDB (2 * TM_BN)
#define TM_A_LOADS (TM_BM * TM_BK / TM_THREADS / 4)
#define TM_B_LOADS (TM_BN * TM_BK / TM_THREADS / 4)
#define TM_ROW(k) ((((k) >> 3) << 2) | ((k) & 3u))
#define TM_SWIZZLE(col, k) ((col) ^ (((k) & 3u) << 3))
#define TM_A_COL(m, k) ((((m) & ~15u) << 1) | (((m) & 7u) << 2) | ((((k) >> 2) & 1u) << 1) | (((m) >> 3) & 1u))
#define TM_B_COL(n, k) ((((n) & ~15u) << 1) | (((n) & 7u) << 2) | ((((n) >> 3) & 1u) << 1) | (((k) >> 2) & 1u))

// c{0..3} += a{0..3} · (b0, b1) on one 16×8×8 tile.
// c{0..3} += a · (b0, b1) with the sum rounded to nearest by FP32 adds: the MMA's own accumulation truncates
// (its error is biased toward zero, which products of positive matrices compound: A¹⁰⁰ of a positive 4096²
// matrix came out 2.7·10⁻³ low on the H100), so the main products of the split start from zero each time.
#define TMMA_ADD(c, a, b0, b1) \
    do { \
        float d0_, d1_, d2_, d3_; \
        asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};" \
            : "=f"(d0_), "=f"(d1_), "=f"(d2_), "=f"(d3_) \
            : "r"((a).x), "r"((a).y), "r"((a).z), "r"((a).w), "r"(b0), "r"(b1), "f"(0.0f)); \
        (c)[0] += d0_; \
        (c)[1] += d1_; \
        (c)[2] += d2_; \
        (c)[3] += d3_; \
    } while (0)
#define TMMA_TILE(c, a, b0, b1) \
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};" \
        : "+f"((c)[0]), "+f"((c)[1]), "+f"((c)[2]), "+f"((c)[3]) \
        : "r"((a).x), "r"((a).y), "r"((a).z), "r"((a).w), "r"(b0), "r"(b1))

__kernel __attribute__((reqd_work_group_size(TM_THREADS, 1, 1)))
void gemm_tmma(__global const float* restrict a, IDX a_off, IDX sam, IDX sak,
               __global const float* restrict b, IDX b_off, IDX sbk, IDX sbn,
               __global float* c, IDX c_off, IDX scm, IDX scn,
               IDX M, IDX N, IDX K, uint conj_a, uint conj_b, float alpha, float beta, uint use_beta,
               uint nd, ulong8 shape, ulong8 batch_a, ulong8 batch_b, ulong8 batch_c)
{
    // Declared as float4 so that the 16-byte fragment reads are aligned.
    __local float4 a_quads[2 * TM_ROWS * TM_LDA / 4], b_quads[2 * TM_ROWS * TM_LDB / 4];
    __local float* a_tile = (__local float*)a_quads;
    __local float* b_tile = (__local float*)b_quads;
    MMA_PLACE(float, TM_BM, TM_BN, 16 * TM_MT, TM_BN / 4);

    // Element (mm, kk) of load l, neighbour q (0..3) along the operand's contiguous axis.
#if A_K_FAST
#define TA_AT(l, q, mm, kk) \
    const uint e_ = tid + (l) * TM_THREADS, kk = (e_ % (TM_BK / 4)) * 4 + (q), mm = e_ / (TM_BK / 4)
#else
#define TA_AT(l, q, mm, kk) \
    const uint e_ = tid + (l) * TM_THREADS, mm = (e_ % (TM_BM / 4)) * 4 + (q), kk = e_ / (TM_BM / 4)
#endif
#if B_N_FAST
#define TB_AT(l, q, nn, kk) \
    const uint e_ = tid + (l) * TM_THREADS, nn = (e_ % (TM_BN / 4)) * 4 + (q), kk = e_ / (TM_BN / 4)
#else
#define TB_AT(l, q, nn, kk) \
    const uint e_ = tid + (l) * TM_THREADS, kk = (e_ % (TM_BK / 4)) * 4 + (q), nn = e_ / (TM_BK / 4)
#endif
    // Four neighbours from inside the matrices: one 16-byte load where the host found them aligned.
#if TM_VEC_A
#define TM_LOAD_A(k0, ra, l) \
    do { \
        TA_AT(l, 0, mm, kk); \
        const float4 v_ = *(__global const float4*)(ap + (m0 + mm) * SAM + ((k0) + kk) * SAK); \
        ra[4 * (l)] = v_.x; ra[4 * (l) + 1] = v_.y; ra[4 * (l) + 2] = v_.z; ra[4 * (l) + 3] = v_.w; \
    } while (0)
#else
#define TM_LOAD_A(k0, ra, l) \
    _Pragma("unroll") for (uint q = 0; q < 4; q++) { \
        TA_AT(l, q, mm, kk); \
        ra[4 * (l) + q] = ap[(m0 + mm) * SAM + ((k0) + kk) * SAK]; \
    }
#endif
#if TM_VEC_B
#define TM_LOAD_B(k0, rb, l) \
    do { \
        TB_AT(l, 0, nn, kk); \
        const float4 v_ = *(__global const float4*)(bp + ((k0) + kk) * SBK + (n0 + nn) * SBN); \
        rb[4 * (l)] = v_.x; rb[4 * (l) + 1] = v_.y; rb[4 * (l) + 2] = v_.z; rb[4 * (l) + 3] = v_.w; \
    } while (0)
#else
#define TM_LOAD_B(k0, rb, l) \
    _Pragma("unroll") for (uint q = 0; q < 4; q++) { \
        TB_AT(l, q, nn, kk); \
        rb[4 * (l) + q] = B_READ((k0) + kk, n0 + nn); \
    }
#endif
    // Slice s of K into the registers ra, rb: unguarded inside the matrices, zeros past their edges.
#define TM_FETCH(s, ra, rb) \
    do { \
        const IDX k0_ = (s) * TM_BK; \
        if (inside_mn && k0_ + TM_BK <= K) { \
            _Pragma("unroll") for (uint l = 0; l < TM_A_LOADS; l++) TM_LOAD_A(k0_, ra, l); \
            _Pragma("unroll") for (uint l = 0; l < TM_B_LOADS; l++) TM_LOAD_B(k0_, rb, l); \
        } else { \
            _Pragma("unroll") for (uint l = 0; l < TM_A_LOADS; l++) { \
                _Pragma("unroll") for (uint q = 0; q < 4; q++) { \
                    TA_AT(l, q, mm, kk); \
                    const IDX gm = m0 + mm, gk = k0_ + kk; \
                    ra[4 * l + q] = (gm < M && gk < K) ? ap[gm * SAM + gk * SAK] : 0.0f; \
                } \
            } \
            _Pragma("unroll") for (uint l = 0; l < TM_B_LOADS; l++) { \
                _Pragma("unroll") for (uint q = 0; q < 4; q++) { \
                    TB_AT(l, q, nn, kk); \
                    const IDX gn = n0 + nn, gk = k0_ + kk; \
                    rb[4 * l + q] = (gn < N && gk < K) ? B_READ(gk, gn) : 0.0f; \
                } \
            } \
        } \
    } while (0)
    // Into local buffer buf: as they are for the split, rounded to TF32 otherwise.
#if TM_SPLIT
#define TM_PUT(v) (v)
#else
#define TM_PUT(v) tf32_nearest(v)
#endif
#define TM_STASH(buf, ra, rb) \
    do { \
        _Pragma("unroll") for (uint l = 0; l < TM_A_LOADS; l++) { \
            _Pragma("unroll") for (uint q = 0; q < 4; q++) { \
                TA_AT(l, q, mm, kk); \
                a_tile[((buf) * TM_ROWS + TM_ROW(kk)) * TM_LDA + TM_SWIZZLE(TM_A_COL(mm, kk), kk)] = TM_PUT(ra[4 * l + q]); \
            } \
        } \
        _Pragma("unroll") for (uint l = 0; l < TM_B_LOADS; l++) { \
            _Pragma("unroll") for (uint q = 0; q < 4; q++) { \
                TB_AT(l, q, nn, kk); \
                b_tile[((buf) * TM_ROWS + TM_ROW(kk)) * TM_LDB + TM_SWIZZLE(TM_B_COL(nn, kk), kk)] = TM_PUT(rb[4 * l + q]); \
            } \
        } \
    } while (0)
    // The MMAs of an 8-deep step whose lane's fragments start at as, bs (tile i at 32·i, tile pair p at 32·p).
#define TM_FRAGMENT(p, i) as_uint4(*(__local const float4*)((p) + (i) * 32))
#if TM_SPLIT
#define TM_SPLIT4(v, hi, lo) \
    do { \
        const float4 v_ = as_float4(v); \
        hi = (uint4)(tf32_head(v_.x), tf32_head(v_.y), tf32_head(v_.z), tf32_head(v_.w)); \
        lo = (uint4)(tf32_rest(v_.x, hi.x), tf32_rest(v_.y, hi.y), tf32_rest(v_.z, hi.z), tf32_rest(v_.w, hi.w)); \
    } while (0)
// One pass of MMA over every tile: sums[i][j] with A fragments af[i] and the pairs of B fragments bf[j / 2].
#define TM_PASS(MMA, sums, af, bf) \
    _Pragma("unroll") for (uint p = 0; p < TM_NT / 2; p++) { \
        _Pragma("unroll") for (uint i = 0; i < TM_MT; i++) { \
            MMA(sums[i][2 * p], af[i], bf[p].x, bf[p].y); \
            MMA(sums[i][2 * p + 1], af[i], bf[p].z, bf[p].w); \
        } \
    }
#define TM_STEP(as, bs) \
    do { \
        uint4 ah[TM_MT], al[TM_MT], bh[TM_NT / 2], bl[TM_NT / 2]; \
        _Pragma("unroll") for (uint i = 0; i < TM_MT; i++) TM_SPLIT4(TM_FRAGMENT(as, i), ah[i], al[i]); \
        _Pragma("unroll") for (uint p = 0; p < TM_NT / 2; p++) TM_SPLIT4(TM_FRAGMENT(bs, p), bh[p], bl[p]); \
        TM_PASS(TMMA_TILE, acc_rest, al, bh); \
        TM_PASS(TMMA_TILE, acc_rest, ah, bl); \
        TM_PASS(TMMA_ADD, acc, ah, bh); \
    } while (0)
#else
#define TM_STEP(as, bs) \
    do { \
        uint4 ah[TM_MT]; \
        _Pragma("unroll") for (uint i = 0; i < TM_MT; i++) ah[i] = TM_FRAGMENT(as, i); \
        _Pragma("unroll") for (uint p = 0; p < TM_NT / 2; p++) { \
            const uint4 bh = TM_FRAGMENT(bs, p); \
            _Pragma("unroll") for (uint i = 0; i < TM_MT; i++) { \
                TMMA_TILE(acc[i][2 * p], ah[i], bh.x, bh.y); \
                TMMA_TILE(acc[i][2 * p + 1], ah[i], bh.z, bh.w); \
            } \
        } \
    } while (0)
#endif
    // Word 4g of a tile in row (q, t), swizzled: the bits the swizzle flips are below a tile's 32 words, so
    // tile i's fragment is 32·i further.
    const uint lane_word = TM_SWIZZLE(4 * g, t);
#define TM_MULTIPLY(buf) \
    do { \
        _Pragma("unroll") for (uint q8 = 0; q8 < TM_BK / 8; q8++) { \
            __local const float* as_ = a_tile + ((buf) * TM_ROWS + q8 * 4 + t) * TM_LDA + 2 * wm + lane_word; \
            __local const float* bs_ = b_tile + ((buf) * TM_ROWS + q8 * 4 + t) * TM_LDB + 2 * wn + lane_word; \
            TM_STEP(as_, bs_); \
        } \
    } while (0)

    // Whole groups past C (none in the host's launch) leave before any barrier.
    if (m0 >= M || n0 >= N) return;
    // acc sums the products of heads; with the split, acc_rest those with a rest, 2¹⁰ larger (see tf32_rest).
    float acc[TM_MT][TM_NT][4];
#if TM_SPLIT
    float acc_rest[TM_MT][TM_NT][4];
#endif
    _Pragma("unroll") for (uint i = 0; i < TM_MT; i++) {
        _Pragma("unroll") for (uint j = 0; j < TM_NT; j++) {
            _Pragma("unroll") for (uint r = 0; r < 4; r++) {
                acc[i][j][r] = 0.0f;
#if TM_SPLIT
                acc_rest[i][j][r] = 0.0f;
#endif
            }
        }
    }
    const IDX slices = (K + TM_BK - 1) / TM_BK;
    const bool inside_mn = m0 + TM_BM <= M && n0 + TM_BN <= N;
    float a0r[4 * TM_A_LOADS], b0r[4 * TM_B_LOADS], a1r[4 * TM_A_LOADS], b1r[4 * TM_B_LOADS];
    MMA_SLICE_LOOP(TM_FETCH, TM_STASH, TM_MULTIPLY);

    __global float* cp = c + c_off + oc;
    _Pragma("unroll") for (uint i = 0; i < TM_MT; i++) {
        _Pragma("unroll") for (uint j = 0; j < TM_NT; j++) {
            _Pragma("unroll") for (uint r = 0; r < 4; r++) {
                const IDX gm = m0 + wm + i * 16 + g + (r >> 1) * 8;
                const IDX gn = n0 + wn + j * 8 + 2 * t + (r & 1);
                if (gm < M && gn < N) {
#if TM_SPLIT
                    // An infinite operand's head makes the head sum ±∞ (or NaN), which is then the result: its
                    // cross products with the other operand's rests, of either sign, would add ∞ − ∞.
                    const float head = acc[i][j][r], rest = acc_rest[i][j][r] * (1.0f / 1024.0f);
                    float v = alpha * (isfinite(head) ? head + rest : head);
#else
                    float v = alpha * acc[i][j][r];
#endif
                    if (use_beta) v += beta * cp[gm * scm + gn * SCN];
                    cp[gm * scm + gn * SCN] = v;
                }
            }
        }
    }
}
#endif

#if WGMMA
// Single-precision products on Hopper's warpgroup tensor-core instructions (`wgmma.mma_async`, sm_90a): a
// warpgroup of 4 warps multiplies a 64 × 128 block of C by an 8-deep slice of K whose operands the instruction
// reads straight from local memory through matrix descriptors, without passing through registers. NVIDIA's
// OpenCL writes PTX for `.target sm_90`, where ptxas refuses wgmma, so the instructions are written here as PTX
// comments that start with `//@sm90a ` (the compiler still substitutes their operands) and
// ClApp::build_program_sm90a turns them into instructions in a program retargeted to sm_90a
// (src/app/ptx_patch.rs). The TF32 operands are rounded to nearest beforehand, by wgmma_pack, which also lays
// them out K-fastest: the instruction reads TF32 operands only in that order. WG_SPLIT 1 is GemmPrecision::
// Fp32Split (3xTF32, as gemm_tmma's TM_SPLIT): the pack writes heads and rests, and each 8-deep step runs three
// instructions.
//
// WG_GROUPS warpgroups (1, 2 or 3) of 64 rows each.
#define WG_BM (64 * WG_GROUPS)
#define WG_THREADS (128 * WG_GROUPS)

// Where value (r, k) of a packed operand sits (in values from its plane's start): the run of its block of `rows`
// rows and WG_BK-deep slice, then within that run the local layout of a slice (below: 4 values along K per 16
// bytes, the block's rows one after the other, then the next 4 along K).
inline IDX wg_slice_at(IDX r, IDX k, IDX rows, IDX KP)
{
    const IDX run = (r / rows) * (KP / WG_BK) + k / WG_BK;
    return run * (rows * WG_BK) + ((k % WG_BK) / 4) * (rows * 4) + (r % rows) * 4 + k % 4;
}

// wgmma_pack: operand X' [ROWS, K] (strides sr, sk; the batch entry's offset from batch_a or batch_b as `which`
// says) into P [count][RP·KP], RP and KP the block multiples, zeros outside ROWS × K, laid out as the product's
// bulk copies take it: each block of `rows` rows (WG_BM for A, WG_BN for B) and WG_BK-deep slice of K is one
// contiguous run that is the local image of that slice (wg_slice_at), so one copy moves it. Each value is rounded
// to TF32 to nearest (hi), or with WG_SPLIT split into a head (hi) and a rest scaled by 2¹⁰ (lo), as gemm_tmma's
// split does. A 32 × 32 tile through local memory, read along whichever axis of X' is contiguous, and written as
// eight runs of 32 rows × 4 values (the tile's rows are whole runs: `rows` and r0 are multiples of 32; KP and k0
// of 4, so each 4 values along K are whole and 16-byte aligned).
__kernel __attribute__((reqd_work_group_size(32, 8, 1)))
void wgmma_pack(__global const float* restrict x, IDX x_off, IDX sr, IDX sk, IDX ROWS, IDX K, IDX RP, IDX KP,
                uint which, uint nd, ulong8 shape, ulong8 batch_a, ulong8 batch_b,
                __global float* restrict hi, __global float* restrict lo)
{
    __local float tile[32][33];
    const uint tx = get_local_id(0), ty = get_local_id(1);
    const IDX k0 = (IDX)get_group_id(0) * 32, r0 = (IDX)get_group_id(1) * 32, z = get_group_id(2);
    IDX oa = 0, ob = 0;
    if (nd > 0) batch_offsets((IDX)z, nd, shape, batch_a, batch_b, &oa, &ob);
    __global const float* xp = x + x_off + (which ? ob : oa);
    if (sk == 1) {
        for (uint j = ty; j < 32; j += 8) {
            const IDX r = r0 + j, k = k0 + tx;
            tile[j][tx] = (r < ROWS && k < K) ? xp[r * sr + k] : 0.0f;
        }
    } else {
        for (uint j = ty; j < 32; j += 8) {
            const IDX r = r0 + tx, k = k0 + j;
            tile[tx][j] = (r < ROWS && k < K) ? xp[r * sr + k * sk] : 0.0f;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const IDX rows = which ? WG_BN : WG_BM;
    // Work-item e stores 4 values along K of one row: rows fastest, so that a warp stores 32 rows' 16 bytes one
    // after the other (one run of the packed layout) and reads one column of the tile (no bank conflicts).
    const uint e = ty * 32 + tx, rr = e % 32, kk = (e / 32) * 4;
    const IDX r = r0 + rr, k = k0 + kk;
    if (r < RP && k < KP) {
        const IDX at = z * RP * KP + wg_slice_at(r, k, rows, KP);
        const float4 v = (float4)(tile[rr][kk], tile[rr][kk + 1], tile[rr][kk + 2], tile[rr][kk + 3]);
        // `at` is a multiple of 4 (k is, and so are KP and the runs' lengths): 16-byte stores.
#if WG_SPLIT
        const uint4 head = (uint4)(tf32_head(v.x), tf32_head(v.y), tf32_head(v.z), tf32_head(v.w));
        *(__global float4*)(hi + at) = as_float4(head);
        *(__global float4*)(lo + at) = as_float4((uint4)(tf32_rest(v.x, head.x), tf32_rest(v.y, head.y),
                                                         tf32_rest(v.z, head.z), tf32_rest(v.w, head.w)));
#else
        *(__global float4*)(hi + at) =
            (float4)(tf32_nearest(v.x), tf32_nearest(v.y), tf32_nearest(v.z), tf32_nearest(v.w));
#endif
    }
}

// gemm_wgmma: C = alpha·A'·B' (+ beta·C) from the packed A [count][MP][KP] and B [count][NP][KP] (B' transposed:
// K fastest for both). A group of WG_GROUPS warpgroups (128 work-items each) computes a WG_BM × WG_BN block of C
// (WG_BM = 64·WG_GROUPS, WG_BN 128 or 256), each warpgroup 64 rows with one m64nWG_BNk8 instruction per 8-deep
// step (WG_BN / 2 accumulators per work-item). K advances in WG_BK-deep slices through WG_STAGES local buffers (up
// to the SM's 227 KiB, beyond the 48 KiB the driver reports: see wgmma.rs), each filled WG_AHEAD slices ahead of
// the one multiplied by bulk copies
// (cp.async.bulk: one instruction per packed run, issued by work-item 0, completed on the buffer's mbarrier).
// Hopper's bulk copies fill local memory from L2 1.3–1.5× faster than cp.async's 16 bytes per work-item
// (scripts/probes/l2_copy_rate.c, H200: 14 KiB slices, 384 work-items, 3 buffers: 5.5 against 4.1 TB/s), and
// the copies bound this kernel.
//
// Local layout of a slice, as the descriptors describe it (no swizzle): core matrices of 8 rows × 4 values
// (16 bytes a row, 128 bytes a matrix), row r of the tile and values k..k+3 at byte (k/4)·(rows·16) + r·16;
// so neighbouring core matrices are 128 bytes apart along M (N) and rows·16 apart along K.
// Accumulator j of a work-item (lane = 4g + t of warp w in its warpgroup) is C[16w + g + 8·((j/2)%2)]
// [8·(j/4) + 2t + j%2] of the warpgroup's 64 × 128 block.
#define WG_ACC (WG_BN / 2)
// WG_INFLIGHT: 1 leaves a slice's instructions running across the next turn's wait and barrier (the buffer
// refilled is then two turns old); 0 waits for them at the end of the turn.
// WG_AHEAD = WG_STAGES − 1 − WG_INFLIGHT: slices fetched ahead of the one multiplied.
// WG_GROUP: block rows of C whose groups are numbered together (0: the launch's own order).
// WG_PROBE (measurement only, wrong products): 1 fetches no slice after the first ones (the instructions and
// the turns' synchronisation alone), 2 runs no instruction (the copies and the synchronisation alone), 3 neither
// (the packing, the turns' synchronisation and the stores).
// A slice holds one plane of each operand, or with WG_SPLIT two: heads, then rests.
#define WG_PLANES (1 + WG_SPLIT)
#define WG_A_PLANE (WG_BM * WG_BK * 4)
#define WG_B_PLANE (WG_BN * WG_BK * 4)
#define WG_A_BYTES (WG_PLANES * WG_A_PLANE)
#define WG_B_BYTES (WG_PLANES * WG_B_PLANE)
#define WG_STAGE_BYTES (WG_A_BYTES + WG_B_BYTES)
#define WG_STR(x) #x
#define WG_XSTR(x) WG_STR(x)

// A local pointer as the 32-bit shared-window address that cp.async and the descriptors take.
inline uint wg_shared(__local const void* p)
{
    return (uint)(size_t)p;
}

// `bytes` (a multiple of 16) from global src to local address dst, asynchronously by the bulk-copy unit; their
// arrival completes that many bytes of the transaction the mbarrier at local address bar expects.
inline void wg_bulk_copy(uint dst, __global const float* src, uint bytes, uint bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(dst), "l"((ulong)src), "r"(bytes), "r"(bar) : "memory");
}

// The mbarrier at local address bar expects one arrival (work-item 0's, below) per phase.
inline void wg_barrier_init(uint bar)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
}

// Work-item 0 arrives at the mbarrier at bar and says that `bytes` of copies will complete its phase.
inline void wg_expect_bytes(uint bar, uint bytes)
{
    asm volatile("{ .reg .b64 state; mbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1; }"
                 ::"r"(bar), "r"(bytes) : "memory");
}

// Waits until the phase of parity `parity` of the mbarrier at bar has completed (its copies have landed and are
// visible to this work-item, and to the instructions it issues).
inline void wg_wait_phase(uint bar, uint parity)
{
    uint done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
}

// The matrix descriptor of a K-fastest operand slice at local address addr with `rows`·16 bytes between the
// core matrices along K (the leading byte offset) and 128 along M or N (the stride byte offset), no swizzle.
// (The two offsets swapped made the product fail on the H200: this is the reading of the layout that holds.)
inline ulong wg_descriptor(uint addr, uint rows)
{
    const uint lead = rows * 16, stride = 128;
    return (ulong)((addr & 0x3ffffu) >> 4) | ((ulong)(lead >> 4) << 16) | ((ulong)(stride >> 4) << 32);
}

// The accumulators as asm operands: "+f" of d[i..i+8) and of d[i..i+64), and their places %0.. in the template.
#define WG_ACC8(d, i) "+f"((d)[(i) + 0]), "+f"((d)[(i) + 1]), "+f"((d)[(i) + 2]), "+f"((d)[(i) + 3]), "+f"((d)[(i) + 4]), "+f"((d)[(i) + 5]), "+f"((d)[(i) + 6]), "+f"((d)[(i) + 7])
#define WG_ACC64(d, i) \
    WG_ACC8(d, (i) + 0), WG_ACC8(d, (i) + 8), WG_ACC8(d, (i) + 16), WG_ACC8(d, (i) + 24), \
    WG_ACC8(d, (i) + 32), WG_ACC8(d, (i) + 40), WG_ACC8(d, (i) + 48), WG_ACC8(d, (i) + 56)
#define WG_REGS64 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#if WG_BN == 256
#define WG_ACCS(d) WG_ACC64(d, 0), WG_ACC64(d, 64)
#define WG_OPERANDS "{" WG_REGS64 ", " \
                    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129"
#else
#define WG_ACCS(d) WG_ACC64(d, 0)
#define WG_OPERANDS "{" WG_REGS64 "}, %64, %65"
#endif
// d (WG_ACC floats) = A-slice · B-slice (+ d where keep is 1), both from local memory through descriptors da, db.
#define WG_MMA(d, da, db, keep) \
    asm volatile("//@sm90a { .reg .pred p; setp.ne.b32 p, " WG_XSTR(keep) ", 0; wgmma.mma_async.sync.aligned.m64n" \
                 WG_XSTR(WG_BN) "k8.f32.tf32.tf32 " WG_OPERANDS ", p, 1, 1; }" \
        : WG_ACCS(d) \
        : "l"(da), "l"(db))

__kernel __attribute__((reqd_work_group_size(WG_THREADS, 1, 1)))
void gemm_wgmma(__global const float* restrict a, __global const float* restrict b,
                __global const float* restrict a_rest, __global const float* restrict b_rest, IDX KP, IDX a_plane,
                IDX b_plane, __global float* c, IDX c_off, IDX scm, IDX scn, IDX M, IDX N, float alpha,
                float beta, uint use_beta, uint nd, ulong8 shape, ulong8 batch_c)
{
    __local float4 slices[WG_STAGES * WG_STAGE_BYTES / 16];
    // One mbarrier per buffer: its phase u completes when the buffer's u-th slice has landed.
    __local ulong arrivals[WG_STAGES];
    const uint tid = get_local_id(0), group = tid >> 7, warp = (tid >> 5) & 3, lane = tid & 31;
#if WG_GROUP
    // Groups run roughly in the order of their linear number (dimension 0 fastest): renumbered so that those
    // running together cover WG_GROUP block rows × a few block columns of C, whose slices of A and B the L2
    // cache then serves to each other, rather than one block row and all of B.
    const uint blocks_n = get_num_groups(0), blocks_m = get_num_groups(1);
    const uint linear = get_group_id(1) * blocks_n + get_group_id(0), band = WG_GROUP * blocks_n;
    const uint first = (linear / band) * WG_GROUP, rows = min((uint)WG_GROUP, blocks_m - first);
    const IDX m0 = (IDX)(first + (linear % band) % rows) * WG_BM, n0 = (IDX)((linear % band) / rows) * WG_BN;
#else
    const IDX m0 = (IDX)get_group_id(1) * WG_BM, n0 = (IDX)get_group_id(0) * WG_BN;
#endif
    const IDX z = get_group_id(2);
    if (m0 >= M || n0 >= N) return;
    // Plane p of each operand: the heads (or TF32 values), then with WG_SPLIT the rests.
    __global const float* aps[2] = {a + z * a_plane + m0 * KP, a_rest + z * a_plane + m0 * KP};
    __global const float* bps[2] = {b + z * b_plane + n0 * KP, b_rest + z * b_plane + n0 * KP};
    const uint base = wg_shared(slices), bars = wg_shared(arrivals);
    const IDX steps = KP / WG_BK;
    if (tid == 0) {
        _Pragma("unroll") for (uint i = 0; i < WG_STAGES; i++) wg_barrier_init(bars + 8 * i);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    // Slice s of K into buffer `buf` (work-item 0 only): the packed runs of this block's rows of A and columns of
    // B (wg_slice_at), one bulk copy per operand and plane, in the order of the buffer's layout.
#define WG_FETCH(buf, s) \
    do { \
        const uint at_ = base + (buf) * WG_STAGE_BYTES, bar_ = bars + 8 * (buf); \
        wg_expect_bytes(bar_, WG_STAGE_BYTES); \
        _Pragma("unroll") for (uint p = 0; p < WG_PLANES; p++) { \
            wg_bulk_copy(at_ + p * WG_A_PLANE, aps[p] + (s) * (WG_BM * WG_BK), WG_A_PLANE, bar_); \
            wg_bulk_copy(at_ + WG_A_BYTES + p * WG_B_PLANE, bps[p] + (s) * (WG_BN * WG_BK), WG_B_PLANE, bar_); \
        } \
    } while (0)

    // d sums the products of heads (TF32 values); with the split, rest those with a rest (2¹⁰ larger, as in
    // gemm_tmma), and head the heads' product of one 8-deep step, which starts from zero and is added to d in
    // FP32 (the instruction's own accumulation truncates: in place, A¹⁰⁰ came out 2.7·10⁻³ low, issue 27).
    float d[WG_ACC];
#if WG_SPLIT
    float rest[WG_ACC], head[WG_ACC];
#endif
    _Pragma("unroll") for (uint j = 0; j < WG_ACC; j++) {
        d[j] = 0.0f;
#if WG_SPLIT
        rest[j] = 0.0f;
        head[j] = 0.0f;
#endif
    }
    if (tid == 0) {
        _Pragma("unroll") for (uint s = 0; s < WG_AHEAD; s++) {
            if (s < steps) WG_FETCH(s, (IDX)s);
        }
    }
    for (IDX s = 0; s < steps; s++) {
        const uint buf = (uint)(s % WG_STAGES);
        // The buffer's (s / WG_STAGES)-th slice. Bulk copies and wgmma both go through the async proxy, so the
        // mbarrier's completion is all the ordering they need (no proxy fence, as cp.async's writes needed).
#if WG_PROBE == 1 || WG_PROBE == 3
        if (s < WG_AHEAD)
#endif
        wg_wait_phase(bars + 8 * buf, (uint)((s / WG_STAGES) & 1));
        barrier(CLK_LOCAL_MEM_FENCE);
        asm volatile("//@sm90a wgmma.fence.sync.aligned;" ::: "memory");
        const uint slice = base + buf * WG_STAGE_BYTES;
        _Pragma("unroll") for (uint q = 0; q < WG_BK / 8; q++) {
            const ulong da = wg_descriptor(slice + 2 * q * (WG_BM * 16) + group * 64 * 16, WG_BM);
            const ulong db = wg_descriptor(slice + WG_A_BYTES + 2 * q * (WG_BN * 16), WG_BN);
#if WG_SPLIT
            const ulong da_rest = wg_descriptor(slice + WG_A_PLANE + 2 * q * (WG_BM * 16) + group * 64 * 16, WG_BM);
            const ulong db_rest = wg_descriptor(slice + WG_A_BYTES + WG_B_PLANE + 2 * q * (WG_BN * 16), WG_BN);
            WG_MMA(rest, da_rest, db, 1);
            WG_MMA(rest, da, db_rest, 1);
            WG_MMA(head, da, db, 0);
#elif WG_PROBE != 2 && WG_PROBE != 3
            WG_MMA(d, da, db, 1);
#endif
        }
        asm volatile("//@sm90a wgmma.commit_group.sync.aligned;" ::: "memory");
        // The buffer refilled now is the one multiplied 1 + WG_INFLIGHT turns ago: every warpgroup finished
        // those instructions (the wait below) before the barrier above.
        const IDX next = s + WG_AHEAD;
#if WG_PROBE != 1 && WG_PROBE != 3
        if (tid == 0 && next < steps) WG_FETCH((uint)(next % WG_STAGES), next);
#endif
        asm volatile("//@sm90a wgmma.wait_group.sync.aligned " WG_XSTR(WG_INFLIGHT) ";" ::: "memory");
#if WG_SPLIT
        // (The split runs one 8-deep step per slice and no instructions in flight across turns.)
        _Pragma("unroll") for (uint j = 0; j < WG_ACC; j++) d[j] += head[j];
#endif
    }
    asm volatile("//@sm90a wgmma.wait_group.sync.aligned 0;" ::: "memory");

    IDX oa = 0, ob = 0, oc = 0;
    if (nd > 0) batch_offsets3(z, nd, shape, batch_c, batch_c, batch_c, &oa, &ob, &oc);
    __global float* cp = c + c_off + oc;
    const IDX row = m0 + group * 64 + warp * 16 + (lane >> 2), col = n0 + 2 * (lane & 3);
    _Pragma("unroll") for (uint j = 0; j < WG_ACC; j++) {
        const IDX gm = row + 8 * ((j >> 1) & 1), gn = col + 8 * (j >> 2) + (j & 1);
        if (gm < M && gn < N) {
#if WG_SPLIT
            // An infinite head sum is the result (its cross products with rests would add ∞ − ∞; gemm_tmma).
            float v = alpha * (isfinite(d[j]) ? d[j] + rest[j] * (1.0f / 1024.0f) : d[j]);
#else
            float v = alpha * d[j];
#endif
            if (use_beta) v += beta * cp[gm * scm + gn * SCN];
            cp[gm * scm + gn * SCN] = v;
        }
    }
}
#endif

// The direct kernel for small products: one output per work-item, operands read straight from global memory
// (through the cache). No tile is wasted when M or N is tiny, and there are no barriers.
__kernel void gemm_direct(__global const T* restrict a, IDX a_off, IDX sam, IDX sak,
                          __global const T* restrict b, IDX b_off, IDX sbk, IDX sbn,
                          __global T* c, IDX c_off, IDX scm, IDX scn,
                          IDX M, IDX N, IDX K, uint conj_a, uint conj_b, T alpha, T beta, uint use_beta,
                          uint nd, ulong8 shape, ulong8 batch_a, ulong8 batch_b, ulong8 batch_c)
{
    const IDX n = get_global_id(0), m = get_global_id(1);
    if (m >= M || n >= N) return;
    IDX oa = 0, ob = 0, oc = 0;
    if (nd > 0) batch_offsets3((IDX)get_global_id(2), nd, shape, batch_a, batch_b, batch_c, &oa, &ob, &oc);
    __global const T* ap = a + a_off + oa + m * SAM;
    __global const T* bp = b + b_off + ob + n * SBN;
    T acc = ZERO;
    for (IDX k = 0; k < K; k++) acc += MUL(OP_A(ap[k * SAK]), OP_B(bp[k * SBK]));
    __global T* cp = c + c_off + oc;
    STORE(cp, m * scm + n * SCN, acc);
}

// Writes identity matrices (A^0 of MatrixPower) into a batch of n × n matrices with strides (sr, sc).
__kernel void set_identity(__global T* out, IDX off, IDX n, IDX sr, IDX sc,
                           uint nd, ulong8 shape, ulong8 batch_out)
{
    const IDX j = get_global_id(0), i = get_global_id(1);
    if (i >= n || j >= n) return;
    IDX o = 0, unused = 0;
    if (nd > 0) batch_offsets((IDX)get_global_id(2), nd, shape, batch_out, batch_out, &o, &unused);
    out[off + o + i * sr + j * sc] = (i == j) ? FROM_REAL(1) : ZERO;
}

#if IS_COMPLEX
// A complex product as a real one (MatMul's real embedding): with A' read as real M × 2K (real and imaginary
// parts in turn along K) and C as real M × 2N, C = A'·B' is the real product of A' and the 2K × 2N matrix that
// holds for each complex b = alpha·op(B'[k][n]) the 2 × 2 block [[re b, im b], [−s·im b, s·re b]] at rows 2k,
// 2k+1 and columns 2n, 2n+1, with s = −1 when A' is conjugated (its imaginary parts count negated). Written
// here as 2K × N complex values (the same memory): row 2k holds b, row 2k+1 holds s·i·b. One matrix per batch
// item of B', packed one after another.
__kernel void complex_embed(__global const T* restrict b, IDX b_off, IDX sbk, IDX sbn, __global T* restrict out,
                            IDX K, IDX N, T alpha, uint conj_a, uint conj_b, uint nd, ulong8 shape, ulong8 batch_b)
{
    const IDX n = get_global_id(0), k = get_global_id(1), item = get_global_id(2);
    if (k >= K || n >= N) return;
    IDX ob = 0, unused = 0;
    if (nd > 0) batch_offsets(item, nd, shape, batch_b, batch_b, &ob, &unused);
    const T v = MUL(alpha, OP_B(b[b_off + ob + k * sbk + n * sbn]));
    __global T* rows = out + item * 2 * K * N + 2 * k * N + n;
    rows[0] = v;
    rows[N] = conj_a ? (T)(v.y, -v.x) : (T)(-v.y, v.x);
}

// C ← beta·C over a batch of rows × cols matrices with strides (sr, sc): a complex beta, applied before the
// real embedding's product, which can only scale C by a real factor.
__kernel void scale_matrices(__global T* c, IDX off, IDX rows, IDX cols, IDX sr, IDX sc, T beta, uint nd,
                             ulong8 shape, ulong8 batch_c)
{
    const IDX j = get_global_id(0), i = get_global_id(1);
    if (i >= rows || j >= cols) return;
    IDX o = 0, unused = 0;
    if (nd > 0) batch_offsets((IDX)get_global_id(2), nd, shape, batch_c, batch_c, &o, &unused);
    __global T* v = c + off + o + i * sr + j * sc;
    *v = MUL(beta, *v);
}
#endif

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
                next_b[l] = OP_B(bp[((k0) + kk) * SBK + (n0 + nn) * SBN]); \
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
                next_b[l] = (gn < N && gk < K) ? OP_B(bp[gk * SBK + gn * SBN]) : ZERO; \
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

#if DMMA || ZMMA
// The local slot of row (column) mm of a tile: each lane's two rows g and g + 8 of a 16-row MMA tile (its
// columns of two neighbouring 8-column tiles) side by side, so one 16-byte read fetches two fragments.
#define DM_A_SLOT(mm) (((mm) & ~15u) | (((mm) & 7u) << 1) | (((mm) >> 3) & 1u))
#define DM_B_SLOT(nn) (((nn) & ~15u) | (((nn) & 7u) << 1) | (((nn) >> 3) & 1u))
// acc{0..3} += a{0,1} · b (one m16n8k4 tile). Fragments: lane = 4·g + t; a0 = A[g][t], a1 = A[g + 8][t],
// b = B[t][g]; c0, c1 = C[g][2t], C[g][2t + 1]; c2, c3 the same in row g + 8.
// A work-item's place in a tensor-core group of 2 × 4 warps: its lane's quad g and place t in it, its warp's
// corner (wm, wn) of warp tiles WROWS × 32, the group's corner (m0, n0) of BM × BN, and the batch entry's
// operands ap, bp (elements of E) and C's offset oc.
#define MMA_PLACE(E, BM, BN, WROWS) \
    const uint tid = get_local_id(0), lane = tid & 31, warp = tid >> 5; \
    const uint g = lane >> 2, t = lane & 3; \
    const uint wm = (warp >> 2) * (WROWS), wn = (warp & 3) * 32; \
    const IDX m0 = (IDX)get_group_id(1) * (BM), n0 = (IDX)get_group_id(0) * (BN); \
    IDX oa = 0, ob = 0, oc = 0; \
    if (nd > 0) batch_offsets3((IDX)get_global_id(2), nd, shape, batch_a, batch_b, batch_c, &oa, &ob, &oc); \
    __global const E* ap = a + a_off + oa; \
    __global const E* bp = b + b_off + ob
#define DMMA_TILE(c, a0, a1, b) \
    asm("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};" \
        : "+d"((c)[0]), "+d"((c)[1]), "+d"((c)[2]), "+d"((c)[3]) : "d"(a0), "d"(a1), "d"(b))

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
// banks. The slice after next is fetched into registers while the current one is multiplied (DM_DEPTH 2, two
// register sets; DM_DEPTH 1 fetches only the next slice), one barrier per slice.
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
#ifndef DM_DEPTH
#define DM_DEPTH 2
#endif

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
    MMA_PLACE(double, DM_BM, DM_BN, 64);

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
    double a0r[DM_LOADS], b0r[DM_LOADS];
    DM_FETCH((IDX)0, a0r, b0r);
    DM_STASH(0u, a0r, b0r);
#if DM_DEPTH == 2
    // Two register sets, so the loop runs two slices per turn: slice s in buffer 0 and slice s + 1 in set 1 at
    // its start; a buffer is refilled only after the barrier that ends the last reads of it.
    double a1r[DM_LOADS], b1r[DM_LOADS];
    if (slices > 1) DM_FETCH((IDX)1, a1r, b1r);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (IDX s = 0; s < slices; s += 2) {
        if (s + 2 < slices) DM_FETCH(s + 2, a0r, b0r);
        DM_MULTIPLY(0u);
        if (s + 1 < slices) DM_STASH(1u, a1r, b1r);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (s + 1 >= slices) break;
        if (s + 3 < slices) DM_FETCH(s + 3, a1r, b1r);
        DM_MULTIPLY(1u);
        if (s + 2 < slices) DM_STASH(0u, a0r, b0r);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#else
    barrier(CLK_LOCAL_MEM_FENCE);
    for (IDX s = 0; s < slices; s++) {
        const uint buf = (uint)(s & 1);
        if (s + 1 < slices) DM_FETCH(s + 1, a0r, b0r);
        DM_MULTIPLY(buf);
        // The other buffer was last read in the previous step, which every work-item finished before the
        // barrier that ended it.
        if (s + 1 < slices) DM_STASH(buf ^ 1u, a0r, b0r);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#endif

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

#if ZMMA
// Complex double products on the FP64 tensor cores (the same device condition as gemm_dmma): op(A) and op(B)
// are split into real and imaginary planes as they enter local memory (conjugation negates an imaginary part
// there), and each 16×8 tile of C keeps a real and an imaginary accumulator, four real MMAs per step:
// re += a_re·b_re − a_im·b_im, im += a_re·b_im + a_im·b_re. 256 work-items (8 warps, 2 × 4) per 64 × 128
// block of C, each warp 32 × 32 (2 × 4 MMA tiles, 64 accumulators per work-item); K in 4-deep slices through
// two local buffers (two planes each: 25.6 KiB in all), the next slice fetched into registers meanwhile.
// Measured on the H200 (cuBLAS ZGEMM 4096³ 10.0 ms, 55 TF/s): 22.9 TF/s at 4096³ and 23.6 at 8192³, no faster
// than gemm_tiled's 24.1 and 23.0 (1000³: 21.6 against 18.4); ordering the two MMAs into one accumulator 16
// apart changed nothing. So the planner does not choose it; MatMulParams::strategy can.
#define ZM_BM 64
#define ZM_BN 128
#define ZM_BK 4
#define ZM_LDA 68
#define ZM_LDB 132
#define ZM_THREADS 256
#define ZM_PLANE_A (ZM_BK * ZM_LDA)
#define ZM_PLANE_B (ZM_BK * ZM_LDB)

__kernel __attribute__((reqd_work_group_size(ZM_THREADS, 1, 1)))
void gemm_zmma(__global const T* restrict a, IDX a_off, IDX sam, IDX sak,
               __global const T* restrict b, IDX b_off, IDX sbk, IDX sbn,
               __global T* c, IDX c_off, IDX scm, IDX scn,
               IDX M, IDX N, IDX K, uint conj_a, uint conj_b, T alpha, T beta, uint use_beta,
               uint nd, ulong8 shape, ulong8 batch_a, ulong8 batch_b, ulong8 batch_c)
{
    // [buffer][re, im][k][row or column], declared as double2 so that the 16-byte fragment reads are aligned.
    __local double2 a_pairs[2 * 2 * ZM_PLANE_A / 2], b_pairs[2 * 2 * ZM_PLANE_B / 2];
    __local double* a_tile = (__local double*)a_pairs;
    __local double* b_tile = (__local double*)b_pairs;
    MMA_PLACE(T, ZM_BM, ZM_BN, 32);

    // One element of A and two of B per work-item and slice, walking the contiguous axis fastest.
#if A_K_FAST
    const uint a_k = tid % ZM_BK, a_m = tid / ZM_BK;
#else
    const uint a_m = tid % ZM_BM, a_k = tid / ZM_BM;
#endif
#if B_N_FAST
#define ZB_AT(l, nn, kk) const uint e_ = tid + (l) * ZM_THREADS, nn = e_ % ZM_BN, kk = e_ / ZM_BN
#else
#define ZB_AT(l, nn, kk) const uint e_ = tid + (l) * ZM_THREADS, kk = e_ % ZM_BK, nn = e_ / ZM_BK
#endif
    T ra, rb[2];
#define ZM_FETCH(s) \
    do { \
        const IDX k0_ = (s) * ZM_BK; \
        const IDX gm = m0 + a_m, gk = k0_ + a_k; \
        ra = (gm < M && gk < K) ? ap[gm * SAM + gk * SAK] : ZERO; \
        if (conj_a) ra.y = -ra.y; \
        _Pragma("unroll") for (uint l = 0; l < 2; l++) { \
            ZB_AT(l, nn, kk); \
            const IDX gn = n0 + nn, gkb = k0_ + kk; \
            rb[l] = (gn < N && gkb < K) ? bp[gkb * SBK + gn * SBN] : ZERO; \
            if (conj_b) rb[l].y = -rb[l].y; \
        } \
    } while (0)
#define ZM_STASH(buf) \
    do { \
        __local double* at_ = a_tile + (buf) * 2 * ZM_PLANE_A + a_k * ZM_LDA + DM_A_SLOT(a_m); \
        at_[0] = ra.x; \
        at_[ZM_PLANE_A] = ra.y; \
        _Pragma("unroll") for (uint l = 0; l < 2; l++) { \
            ZB_AT(l, nn, kk); \
            __local double* bt_ = b_tile + (buf) * 2 * ZM_PLANE_B + kk * ZM_LDB + DM_B_SLOT(nn); \
            bt_[0] = rb[l].x; \
            bt_[ZM_PLANE_B] = rb[l].y; \
        } \
    } while (0)

    double acc_re[2][4][4], acc_im[2][4][4];
    _Pragma("unroll") for (uint i = 0; i < 2; i++) {
        _Pragma("unroll") for (uint j = 0; j < 4; j++) {
            _Pragma("unroll") for (uint r = 0; r < 4; r++) {
                acc_re[i][j][r] = 0.0;
                acc_im[i][j][r] = 0.0;
            }
        }
    }
    const IDX slices = (K + ZM_BK - 1) / ZM_BK;
    ZM_FETCH((IDX)0);
    ZM_STASH(0u);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (IDX s = 0; s < slices; s++) {
        const uint buf = (uint)(s & 1);
        if (s + 1 < slices) ZM_FETCH(s + 1);
        __local const double* as = a_tile + buf * 2 * ZM_PLANE_A + t * ZM_LDA + wm + 2 * g;
        __local const double* bs = b_tile + buf * 2 * ZM_PLANE_B + t * ZM_LDB + wn + 2 * g;
        double2 are[2], aim[2], bre[2], bim[2];
        _Pragma("unroll") for (uint i = 0; i < 2; i++) {
            are[i] = *(__local const double2*)(as + i * 16);
            aim[i] = *(__local const double2*)(as + ZM_PLANE_A + i * 16);
        }
        _Pragma("unroll") for (uint j = 0; j < 2; j++) {
            bre[j] = *(__local const double2*)(bs + j * 16);
            bim[j] = *(__local const double2*)(bs + ZM_PLANE_B + j * 16);
        }
        _Pragma("unroll") for (uint i = 0; i < 2; i++) {
            const double nx = -aim[i].x, ny = -aim[i].y;
            _Pragma("unroll") for (uint j = 0; j < 4; j++) {
                const double br = (j & 1) ? bre[j >> 1].y : bre[j >> 1].x;
                const double bi = (j & 1) ? bim[j >> 1].y : bim[j >> 1].x;
                DMMA_TILE(acc_re[i][j], are[i].x, are[i].y, br);
                DMMA_TILE(acc_re[i][j], nx, ny, bi);
                DMMA_TILE(acc_im[i][j], are[i].x, are[i].y, bi);
                DMMA_TILE(acc_im[i][j], aim[i].x, aim[i].y, br);
            }
        }
        if (s + 1 < slices) ZM_STASH(buf ^ 1u);
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    __global T* cp = c + c_off + oc;
    _Pragma("unroll") for (uint i = 0; i < 2; i++) {
        _Pragma("unroll") for (uint j = 0; j < 4; j++) {
            _Pragma("unroll") for (uint r = 0; r < 4; r++) {
                const IDX gm = m0 + wm + i * 16 + g + (r >> 1) * 8;
                const IDX gn = n0 + wn + j * 8 + 2 * t + (r & 1);
                if (gm < M && gn < N) STORE(cp, gm * scm + gn * SCN, ((T)(acc_re[i][j][r], acc_im[i][j][r])));
            }
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

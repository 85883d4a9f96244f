// Multi-channel filter banks (FilterBank): input [N, C, H, W], filters [K, C, R, S], output [N, K, P, Q].
// Prepended by common.cl. Build options: T, R, IDX, BORDER, WG (bank_direct's work-group), KB (filters per
// work-item in bank_direct); BLOCK_R, BLOCK_S, BLOCK_K, BLOCK_CB, BLOCK_QX, BLOCK_WX, BLOCK_WY for bank_blocked.
//
// Output (p, q) of filter k reads input (p*SH + r'*DH - PH, q*SW + s'*DW - PW) of every channel, with
// (r', s') = (r, s) for a correlation and (R-1-r, S-1-s) for a convolution (FLIP); coordinates outside the image
// read through border_index (zero padding is BORDER_CONSTANT with value 0).
// geo (int16): N C H W | K R S | P Q | PH PW | SH SW | DH DW | FLIP.
// Strides (ulong8, elements): x n c h w | f k c r s  and  y n k p q | unused.
#define BN geo.s0
#define BC geo.s1
#define BH geo.s2
#define BW geo.s3
#define BK geo.s4
#define BR geo.s5
#define BS geo.s6
#define BP geo.s7
#define BQ geo.s8
#define PH geo.s9
#define PW geo.sa
#define SH geo.sb
#define SW geo.sc
#define DH geo.sd
#define DW geo.se
#define FLIP geo.sf

// ---- bank_direct: each work-item computes KB filters' outputs at one (n, p, q); a group covers WG
// consecutive q of one output row and one block of KB filters, so every work-item of a group reads the same
// filter weight at the same time (a broadcast) and neighbouring input elements.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void bank_direct(__global const T* restrict x, IDX x_off, ulong8 xs, __global const T* restrict f, IDX f_off,
                 __global T* restrict y, IDX y_off, ulong8 ys, int16 geo, T value, IDX q_blocks, IDX k_blocks,
                 IDX groups)
{
    for (IDX g = (IDX)get_group_id(0); g < groups; g += (IDX)get_num_groups(0)) {
        IDX rest = g;
        const int qb = (int)(rest % q_blocks);
        rest /= q_blocks;
        const int p = (int)(rest % (IDX)BP);
        rest /= (IDX)BP;
        const int k0 = (int)(rest % k_blocks) * KB;
        const IDX n = rest / k_blocks;
        const int q = qb * WG + (int)get_local_id(0);
        if (q >= BQ) continue;
        const int kn = min(KB, BK - k0);
        T acc[KB];
        #pragma unroll
        for (int kk = 0; kk < KB; ++kk) acc[kk] = ZERO;
        __global const T* img = x + x_off + n * (IDX)xs.s0;
        for (int c = 0; c < BC; ++c) {
            __global const T* chan = img + (IDX)c * (IDX)xs.s1;
            __global const T* fc = f + f_off + (IDX)k0 * (IDX)xs.s4 + (IDX)c * (IDX)xs.s5;
            for (int r = 0; r < BR; ++r) {
                const int rr = FLIP ? BR - 1 - r : r;
                const int ih = border_index(p * SH + rr * DH - PH, BH);
                for (int s = 0; s < BS; ++s) {
                    const int ss = FLIP ? BS - 1 - s : s;
                    const int iw = border_index(q * SW + ss * DW - PW, BW);
                    const T v = (ih < 0 || iw < 0) ? value : chan[(IDX)ih * (IDX)xs.s2 + (IDX)iw * (IDX)xs.s3];
                    __global const T* w = fc + (IDX)r * (IDX)xs.s6 + (IDX)s * (IDX)xs.s7;
                    #pragma unroll
                    for (int kk = 0; kk < KB; ++kk)
                        if (kk < kn) acc[kk] += MUL(v, w[(IDX)kk * (IDX)xs.s4]);
                }
            }
        }
        __global T* out = y + y_off + n * (IDX)ys.s0 + (IDX)k0 * (IDX)ys.s1 + (IDX)p * (IDX)ys.s2 + (IDX)q * (IDX)ys.s3;
        #pragma unroll
        for (int kk = 0; kk < KB; ++kk)
            if (kk < kn) out[(IDX)kk * (IDX)ys.s1] = acc[kk];
    }
}

// ---- bank_blocked (built with BLOCK_R): stride 1, dilation 1, filters of BLOCK_R × BLOCK_S taps, and
// BLOCK_K filters per group. A group of BLOCK_WX × BLOCK_WY work-items computes a tile of BLOCK_WY output rows by
// BLOCK_WX·BLOCK_QX columns of one image for BLOCK_K filters; each work-item BLOCK_QX consecutive outputs of one
// row for every filter of the block. BLOCK_CB channels at a time, the group stages the input tiles with their halo
// (through the border rule) and the block's weights in local memory; a work-item then keeps one input row segment of
// BLOCK_QX + BLOCK_S − 1 values in registers and multiplies it by each weight, which all its neighbours read at
// once (a broadcast): BLOCK_QX multiply-adds per weight read, where bank_direct reads a weight per
// multiply-add from global memory. Groups run along column tiles, then row tiles, then filter blocks, then images.
#ifdef BLOCK_R
#define BLOCK_TW (BLOCK_WX * BLOCK_QX)
#define BLOCK_XW (BLOCK_TW + BLOCK_S - 1)
#define BLOCK_XH (BLOCK_WY + BLOCK_R - 1)
#define BLOCK_TILE (BLOCK_XH * BLOCK_XW)
#define BLOCK_TAPS (BLOCK_R * BLOCK_S * BLOCK_K)
__kernel __attribute__((reqd_work_group_size(BLOCK_WX * BLOCK_WY, 1, 1)))
void bank_blocked(__global const T* restrict x, IDX x_off, ulong8 xs, __global const T* restrict f, IDX f_off,
                  __global T* restrict y, IDX y_off, ulong8 ys, int16 geo, T value, int col_tiles, int row_tiles,
                  int k_blocks)
{
    // BLOCK_CB channels staged at once: one pair of barriers per BLOCK_CB channels, and more loads in flight.
    __local T tile[BLOCK_CB * BLOCK_TILE];
    __local T weights[BLOCK_CB * BLOCK_TAPS];
    const int lid = (int)get_local_id(0);
    const int lx = lid % BLOCK_WX, ly = lid / BLOCK_WX;
    int g = (int)get_group_id(0);
    const int q0 = (g % col_tiles) * BLOCK_TW;
    g /= col_tiles;
    const int p0 = (g % row_tiles) * BLOCK_WY;
    g /= row_tiles;
    const int k0 = (g % k_blocks) * BLOCK_K;
    const IDX n = (IDX)(g / k_blocks);
    const int kn = min(BLOCK_K, BK - k0);
    T acc[BLOCK_K][BLOCK_QX];
    #pragma unroll
    for (int kk = 0; kk < BLOCK_K; ++kk) {
        #pragma unroll
        for (int j = 0; j < BLOCK_QX; ++j) acc[kk][j] = ZERO;
    }
    __global const T* image = x + x_off + n * (IDX)xs.s0;
    for (int c0 = 0; c0 < BC; c0 += BLOCK_CB) {
        const int cn = min(BLOCK_CB, BC - c0);
        for (int i = lid; i < cn * BLOCK_TILE; i += BLOCK_WX * BLOCK_WY) {
            const int cb = i / BLOCK_TILE, e = i % BLOCK_TILE;
            const int ih = border_index(p0 + e / BLOCK_XW - PH, BH);
            const int iw = border_index(q0 + e % BLOCK_XW - PW, BW);
            tile[i] = (ih < 0 || iw < 0)
                          ? value
                          : image[(IDX)(c0 + cb) * (IDX)xs.s1 + (IDX)ih * (IDX)xs.s2 + (IDX)iw * (IDX)xs.s3];
        }
        // weights[cb·TAPS + (r·S + s)·K + kk]: a correlation's tap (r, s), the convolution's flipped one; zero
        // past the last filter.
        for (int i = lid; i < cn * BLOCK_TAPS; i += BLOCK_WX * BLOCK_WY) {
            const int cb = i / BLOCK_TAPS, e = i % BLOCK_TAPS;
            const int kk = e % BLOCK_K, rs = e / BLOCK_K;
            const int r = FLIP ? BLOCK_R - 1 - rs / BLOCK_S : rs / BLOCK_S;
            const int s = FLIP ? BLOCK_S - 1 - rs % BLOCK_S : rs % BLOCK_S;
            __global const T* fc = f + f_off + (IDX)(c0 + cb) * (IDX)xs.s5;
            weights[i] = kk < kn ? fc[(IDX)(k0 + kk) * (IDX)xs.s4 + (IDX)r * (IDX)xs.s6 + (IDX)s * (IDX)xs.s7] : ZERO;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int cb = 0; cb < cn; ++cb) {
            for (int r = 0; r < BLOCK_R; ++r) {
                T row[BLOCK_QX + BLOCK_S - 1];
                __local const T* src = tile + cb * BLOCK_TILE + (ly + r) * BLOCK_XW + lx * BLOCK_QX;
                #pragma unroll
                for (int j = 0; j < BLOCK_QX + BLOCK_S - 1; ++j) row[j] = src[j];
                __local const T* w = weights + cb * BLOCK_TAPS + r * BLOCK_S * BLOCK_K;
                #pragma unroll
                for (int s = 0; s < BLOCK_S; ++s) {
                    #pragma unroll
                    for (int kk = 0; kk < BLOCK_K; ++kk) {
                        const T wt = w[s * BLOCK_K + kk];
                        #pragma unroll
                        for (int j = 0; j < BLOCK_QX; ++j) acc[kk][j] += MUL(row[j + s], wt);
                    }
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const int p = p0 + ly;
    if (p >= BP) return;
    __global T* out = y + y_off + n * (IDX)ys.s0 + (IDX)k0 * (IDX)ys.s1 + (IDX)p * (IDX)ys.s2;
    #pragma unroll
    for (int kk = 0; kk < BLOCK_K; ++kk) {
        #pragma unroll
        for (int j = 0; j < BLOCK_QX; ++j) {
            const int q = q0 + lx * BLOCK_QX + j;
            if (kk < kn && q < BQ) out[(IDX)kk * (IDX)ys.s1 + (IDX)q * (IDX)ys.s3] = acc[kk][j];
        }
    }
}
#endif

// ---- bank_im2col: unrolls images n0 .. n0+count-1 into col [count, C*R*S, P*Q] (contiguous), so that the bank
// becomes one batched product filters[K, C*R*S] x col[n] per image. One element per work-item, grid-stride.
__kernel void bank_im2col(__global const T* restrict x, IDX x_off, ulong8 xs, __global T* restrict col, int16 geo,
                          T value, IDX n0, IDX total)
{
    for (IDX i = (IDX)get_global_id(0); i < total; i += (IDX)get_global_size(0)) {
        IDX rest = i;
        const int q = (int)(rest % (IDX)BQ);
        rest /= (IDX)BQ;
        const int p = (int)(rest % (IDX)BP);
        rest /= (IDX)BP;
        const int s = (int)(rest % (IDX)BS);
        rest /= (IDX)BS;
        const int r = (int)(rest % (IDX)BR);
        rest /= (IDX)BR;
        const int c = (int)(rest % (IDX)BC);
        const IDX n = n0 + rest / (IDX)BC;
        const int rr = FLIP ? BR - 1 - r : r, ss = FLIP ? BS - 1 - s : s;
        const int ih = border_index(p * SH + rr * DH - PH, BH), iw = border_index(q * SW + ss * DW - PW, BW);
        col[i] = (ih < 0 || iw < 0) ? value
                                    : x[x_off + n * (IDX)xs.s0 + (IDX)c * (IDX)xs.s1 + (IDX)ih * (IDX)xs.s2 +
                                        (IDX)iw * (IDX)xs.s3];
    }
}

// ---- Winograd F(WM×WM, 3×3) (Lavin & Gray), WM = WINO_M: 2 (the default) or 4. 3 × 3 filters, stride 1,
// dilation 1. Each WM × WM block of outputs ("tile") comes from a WN × WN input patch d (WN = WM + 2) and a filter
// g as Y = Aᵀ[(G g Gᵀ) ∘ (Bᵀ d B)]A, and the channel sum moves inside: M[ξ] = Σ_c U[ξ, k, c] · V[ξ, c, t] for each
// of the WN² points ξ = WN·a + b — WN² batched GEMMs of K × C by C × tiles (FilterBank runs them with MatMul):
// 16 products per 2 × 2 outputs, or 36 per 4 × 4, instead of 9 per output.
// F(2×2, 3×3), from the points 0, ±1, ∞:
//   Bᵀ = |1  0 -1  0|   G = | 1    0    0 |   Aᵀ = |1  1  1  0|
//        |0  1  1  0|       |1/2  1/2  1/2|        |0  1 -1 -1|
//        |0 -1  1  0|       |1/2 -1/2  1/2|
//        |0  1  0 -1|       | 0    0    1 |
// F(4×4, 3×3), from the points 0, ±1, ±1/2, ∞ (Toom-Cook; ±1/2 rather than ±2 keeps Aᵀ's entries at most 1 and
// gave 0.7× the float32 error of ±2 on random data):
//   Bᵀ = |1/4    0  -5/4    0  1  0|   G = |  4     0     0 |   Aᵀ = |1  1  1   1     1   0|
//        |  0 -1/4  -1/4    1  1  0|       | 2/3   2/3   2/3|        |0  1 -1  1/2  -1/2  0|
//        |  0  1/4  -1/4   -1  1  0|       | 2/3  -2/3   2/3|        |0  1  1  1/4   1/4  0|
//        |  0 -1/2    -1  1/2  1  0|       |-8/3  -4/3  -2/3|        |0  1 -1  1/8  -1/8  1|
//        |  0  1/2    -1 -1/2  1  0|       |-8/3   4/3  -2/3|
//        |  0  1/4     0 -5/4  0  1|       |  0     0     1 |
// Tiles t of a chunk of images n0.. run along q, then p, then the image: t = (n − n0)·TP·TQ + tp·TQ + tq, with
// TP = ⌈P/WM⌉, TQ = ⌈Q/WM⌉; the last row / column of tiles computes outputs past P or Q that are not written.
// The transforms only add, subtract and scale by real constants, so complex T works as it is.
#ifndef WINO_M
#define WINO_M 2
#endif
#define WM WINO_M
#define WN (WINO_M + 2)

#if WINO_M == 4
// G·(v0, v1, v2)ᵀ: a column of three filter taps to WN values.
inline void wino_g(const T v0, const T v1, const T v2, T* o) {
    const R two_thirds = (R)(2.0 / 3.0);
    o[0] = (R)4 * v0;
    o[1] = two_thirds * (v0 + v1 + v2);
    o[2] = two_thirds * (v0 - v1 + v2);
    o[3] = -two_thirds * ((R)4 * v0 + (R)2 * v1 + v2);
    o[4] = -two_thirds * ((R)4 * v0 - (R)2 * v1 + v2);
    o[5] = v2;
}
// Bᵀ·d for a column d of WN patch values.
inline void wino_bt(const T* d, T* o) {
    const R quarter = (R)0.25, one_half = (R)0.5, five_quarters = (R)1.25;
    o[0] = quarter * d[0] - five_quarters * d[2] + d[4];
    o[1] = d[3] + d[4] - quarter * (d[1] + d[2]);
    o[2] = d[4] - d[3] + quarter * (d[1] - d[2]);
    o[3] = d[4] - d[2] + one_half * (d[3] - d[1]);
    o[4] = d[4] - d[2] + one_half * (d[1] - d[3]);
    o[5] = quarter * d[1] - five_quarters * d[3] + d[5];
}
// Aᵀ·m for a column m of WN products.
inline void wino_at(const T* m, T* o) {
    const R one_half = (R)0.5, quarter = (R)0.25, eighth = (R)0.125;
    const T plus = m[1] + m[2], minus = m[1] - m[2], plus_far = m[3] + m[4], minus_far = m[3] - m[4];
    o[0] = m[0] + plus + plus_far;
    o[1] = minus + one_half * minus_far;
    o[2] = plus + quarter * plus_far;
    o[3] = minus + eighth * minus_far + m[5];
}
#else
inline void wino_g(const T v0, const T v1, const T v2, T* o) {
    const R one_half = (R)0.5;
    o[0] = v0;
    o[1] = one_half * (v0 + v1 + v2);
    o[2] = one_half * (v0 - v1 + v2);
    o[3] = v2;
}
inline void wino_bt(const T* d, T* o) {
    o[0] = d[0] - d[2];
    o[1] = d[1] + d[2];
    o[2] = d[2] - d[1];
    o[3] = d[1] - d[3];
}
inline void wino_at(const T* m, T* o) {
    o[0] = m[0] + m[1] + m[2];
    o[1] = m[1] - m[2] - m[3];
}
#endif

// bank_wino_filter: U[ξ, k, c] (contiguous [WN², K, C]) = (G g Gᵀ)[ξ] of filter (k, c), flipped for a
// convolution. One (a, k, c) per work-item, grid-stride, c fastest: row a of G·g·Gᵀ, WN values into WN planes.
// (A work-item per (k, c) writing all WN² planes ran F(4×4, 3×3)'s 256 × 256 filters in 7.6 ms on PoCL, its
// stores spread over 36 pages; per row, 1.1.)
__kernel void bank_wino_filter(__global const T* restrict f, IDX f_off, ulong8 xs, __global T* restrict u, int16 geo)
{
    const IDX kc = (IDX)BK * (IDX)BC;
    for (IDX i = (IDX)get_global_id(0); i < (IDX)WN * kc; i += (IDX)get_global_size(0)) {
        const int a = (int)(i / kc);
        const IDX k = i % kc / (IDX)BC, c = i % (IDX)BC;
        __global const T* fk = f + f_off + k * (IDX)xs.s4 + c * (IDX)xs.s5;
        T gg[3]; // row a of G·g
        #pragma unroll
        for (int s = 0; s < 3; ++s) {
            T column[WN];
            wino_g(fk[(IDX)(FLIP ? 2 : 0) * (IDX)xs.s6 + (IDX)(FLIP ? 2 - s : s) * (IDX)xs.s7],
                   fk[(IDX)1 * (IDX)xs.s6 + (IDX)(FLIP ? 2 - s : s) * (IDX)xs.s7],
                   fk[(IDX)(FLIP ? 0 : 2) * (IDX)xs.s6 + (IDX)(FLIP ? 2 - s : s) * (IDX)xs.s7], column);
            gg[s] = column[0];
            #pragma unroll
            for (int j = 1; j < WN; ++j)
                if (j == a) gg[s] = column[j];
        }
        T row[WN];
        wino_g(gg[0], gg[1], gg[2], row);
        #pragma unroll
        for (int b = 0; b < WN; ++b) u[((IDX)(WN * a + b) * (IDX)BK + k) * (IDX)BC + c] = row[b];
    }
}

// bank_wino_input: V[ξ, c, t] (rows of length ldv) = (Bᵀ d B)[ξ] of the WN × WN patch of channel c at tile t,
// read through the border rule. One (c, t) per work-item, t fastest (coalesced writes to each of the WN² planes).
__kernel void bank_wino_input(__global const T* restrict x, IDX x_off, ulong8 xs, __global T* restrict v, IDX ldv,
                              int16 geo, T value, IDX n0, int tiles_p, int tiles_q, IDX tiles)
{
    const IDX total = (IDX)BC * tiles;
    for (IDX i = (IDX)get_global_id(0); i < total; i += (IDX)get_global_size(0)) {
        const IDX c = i / tiles, t = i % tiles;
        const int tq = (int)(t % (IDX)tiles_q);
        const int tp = (int)(t / (IDX)tiles_q % (IDX)tiles_p);
        const IDX n = n0 + t / ((IDX)tiles_p * (IDX)tiles_q);
        __global const T* chan = x + x_off + n * (IDX)xs.s0 + c * (IDX)xs.s1;
        T d[WN][WN]; // d transposed: d[s][r], so that each column is one array
        #pragma unroll
        for (int r = 0; r < WN; ++r) {
            const int ih = border_index(WM * tp + r - PH, BH);
            #pragma unroll
            for (int s = 0; s < WN; ++s) {
                const int iw = border_index(WM * tq + s - PW, BW);
                d[s][r] = (ih < 0 || iw < 0) ? value : chan[(IDX)ih * (IDX)xs.s2 + (IDX)iw * (IDX)xs.s3];
            }
        }
        T bd[WN][WN]; // (Bᵀ·d)ᵀ: bd[s][a]
        #pragma unroll
        for (int s = 0; s < WN; ++s) wino_bt(d[s], bd[s]);
        __global T* out = v + c * ldv + t;
        const IDX plane = (IDX)BC * ldv;
        #pragma unroll
        for (int a = 0; a < WN; ++a) {
            T col[WN], row[WN];
            #pragma unroll
            for (int s = 0; s < WN; ++s) col[s] = bd[s][a];
            wino_bt(col, row);
            #pragma unroll
            for (int b = 0; b < WN; ++b) out[(IDX)(WN * a + b) * plane] = row[b];
        }
    }
}

// bank_wino_output: the WM × WM outputs Aᵀ M[·, k, t] A of filter k at tile t (M rows of length ldm), written
// through the output strides where they fall inside P × Q. One (k, t) per work-item, t fastest.
__kernel void bank_wino_output(__global const T* restrict m, IDX ldm, __global T* restrict y, IDX y_off, ulong8 ys,
                               int16 geo, IDX n0, int tiles_p, int tiles_q, IDX tiles)
{
    const IDX total = (IDX)BK * tiles;
    for (IDX i = (IDX)get_global_id(0); i < total; i += (IDX)get_global_size(0)) {
        const IDX k = i / tiles, t = i % tiles;
        const int tq = (int)(t % (IDX)tiles_q);
        const int tp = (int)(t / (IDX)tiles_q % (IDX)tiles_p);
        const IDX n = n0 + t / ((IDX)tiles_p * (IDX)tiles_q);
        const IDX plane = (IDX)BK * ldm;
        __global const T* in = m + k * ldm + t;
        T am[WN][WM]; // (Aᵀ·M)ᵀ: am[b][r]
        #pragma unroll
        for (int b = 0; b < WN; ++b) {
            T col[WN];
            #pragma unroll
            for (int a = 0; a < WN; ++a) col[a] = in[(IDX)(WN * a + b) * plane];
            wino_at(col, am[b]);
        }
        __global T* out = y + y_off + n * (IDX)ys.s0 + k * (IDX)ys.s1;
        #pragma unroll
        for (int r = 0; r < WM; ++r) {
            const int p = WM * tp + r;
            if (p >= BP) break;
            T col[WN], row[WM];
            #pragma unroll
            for (int b = 0; b < WN; ++b) col[b] = am[b][r];
            wino_at(col, row);
            #pragma unroll
            for (int s = 0; s < WM; ++s) {
                const int q = WM * tq + s;
                if (q < BQ) out[(IDX)p * (IDX)ys.s2 + (IDX)q * (IDX)ys.s3] = row[s];
            }
        }
    }
}

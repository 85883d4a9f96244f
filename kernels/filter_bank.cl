// Multi-channel filter banks (FilterBank): input [N, C, H, W], filters [K, C, R, S], output [N, K, P, Q].
// Prepended by common.cl. Build options: T, R, IDX, BORDER, WG (bank_direct's work-group), KB (filters per
// work-item in bank_direct).
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

// ---- Winograd F(2×2, 3×3) (Lavin & Gray): 3 × 3 filters, stride 1, dilation 1. Each 2 × 2 block of outputs
// ("tile") comes from a 4 × 4 input patch d and a filter g as Y = Aᵀ[(G g Gᵀ) ∘ (Bᵀ d B)]A with
//   Bᵀ = |1  0 -1  0|   G = | 1    0    0 |   Aᵀ = |1  1  1  0|
//        |0  1  1  0|       |1/2  1/2  1/2|        |0  1 -1 -1|
//        |0 -1  1  0|       |1/2 -1/2  1/2|
//        |0  1  0 -1|       | 0    0    1 |
// and the channel sum moves inside: M[ξ] = Σ_c U[ξ, k, c] · V[ξ, c, t] for each of the 16 points ξ = 4a + b — 16
// batched GEMMs of K × C by C × tiles (FilterBank runs them with MatMul). 16 products per tile instead of 36.
// Tiles t of a chunk of images n0.. run along q, then p, then the image: t = (n − n0)·TP·TQ + tp·TQ + tq, with
// TP = ⌈P/2⌉, TQ = ⌈Q/2⌉; the last row / column of tiles computes an output past P or Q that is not written.
// The transforms only add, subtract and halve, so complex T works as it is.

// bank_wino_filter: U[ξ, k, c] (contiguous [16, K, C]) = (G g Gᵀ)[ξ] of filter (k, c), flipped for a
// convolution. One (k, c) per work-item, grid-stride.
__kernel void bank_wino_filter(__global const T* restrict f, IDX f_off, ulong8 xs, __global T* restrict u, int16 geo)
{
    const IDX kc = (IDX)BK * (IDX)BC;
    for (IDX i = (IDX)get_global_id(0); i < kc; i += (IDX)get_global_size(0)) {
        const IDX k = i / (IDX)BC, c = i % (IDX)BC;
        __global const T* fk = f + f_off + k * (IDX)xs.s4 + c * (IDX)xs.s5;
        T g[3][3];
        for (int r = 0; r < 3; ++r)
            for (int s = 0; s < 3; ++s)
                g[r][s] = fk[(IDX)(FLIP ? 2 - r : r) * (IDX)xs.s6 + (IDX)(FLIP ? 2 - s : s) * (IDX)xs.s7];
        const R one_half = (R)0.5;
        T gg[4][3]; // G·g
        for (int s = 0; s < 3; ++s) {
            gg[0][s] = g[0][s];
            gg[1][s] = one_half * (g[0][s] + g[1][s] + g[2][s]);
            gg[2][s] = one_half * (g[0][s] - g[1][s] + g[2][s]);
            gg[3][s] = g[2][s];
        }
        for (int a = 0; a < 4; ++a) {
            const T row[4] = {gg[a][0], one_half * (gg[a][0] + gg[a][1] + gg[a][2]),
                              one_half * (gg[a][0] - gg[a][1] + gg[a][2]), gg[a][2]};
            for (int b = 0; b < 4; ++b) u[((IDX)(4 * a + b) * (IDX)BK + k) * (IDX)BC + c] = row[b];
        }
    }
}

// bank_wino_input: V[ξ, c, t] (rows of length ldv) = (Bᵀ d B)[ξ] of the 4 × 4 patch of channel c at tile t, read
// through the border rule. One (c, t) per work-item, t fastest (coalesced writes to each of the 16 planes).
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
        T d[4][4];
        for (int r = 0; r < 4; ++r) {
            const int ih = border_index(2 * tp + r - PH, BH);
            for (int s = 0; s < 4; ++s) {
                const int iw = border_index(2 * tq + s - PW, BW);
                d[r][s] = (ih < 0 || iw < 0) ? value : chan[(IDX)ih * (IDX)xs.s2 + (IDX)iw * (IDX)xs.s3];
            }
        }
        T bd[4][4]; // Bᵀ·d
        for (int s = 0; s < 4; ++s) {
            bd[0][s] = d[0][s] - d[2][s];
            bd[1][s] = d[1][s] + d[2][s];
            bd[2][s] = d[2][s] - d[1][s];
            bd[3][s] = d[1][s] - d[3][s];
        }
        __global T* out = v + c * ldv + t;
        const IDX plane = (IDX)BC * ldv;
        for (int a = 0; a < 4; ++a) {
            out[(IDX)(4 * a) * plane] = bd[a][0] - bd[a][2];
            out[(IDX)(4 * a + 1) * plane] = bd[a][1] + bd[a][2];
            out[(IDX)(4 * a + 2) * plane] = bd[a][2] - bd[a][1];
            out[(IDX)(4 * a + 3) * plane] = bd[a][1] - bd[a][3];
        }
    }
}

// bank_wino_output: the 2 × 2 outputs Aᵀ M[·, k, t] A of filter k at tile t (M rows of length ldm), written through
// the output strides where they fall inside P × Q. One (k, t) per work-item, t fastest.
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
        T am[2][4]; // Aᵀ·M
        for (int b = 0; b < 4; ++b) {
            const T m0 = in[(IDX)b * plane], m1 = in[(IDX)(4 + b) * plane];
            const T m2 = in[(IDX)(8 + b) * plane], m3 = in[(IDX)(12 + b) * plane];
            am[0][b] = m0 + m1 + m2;
            am[1][b] = m1 - m2 - m3;
        }
        __global T* out = y + y_off + n * (IDX)ys.s0 + k * (IDX)ys.s1;
        for (int r = 0; r < 2; ++r) {
            const int p = 2 * tp + r;
            if (p >= BP) break;
            const T row[2] = {am[r][0] + am[r][1] + am[r][2], am[r][1] - am[r][2] - am[r][3]};
            for (int s = 0; s < 2; ++s) {
                const int q = 2 * tq + s;
                if (q < BQ) out[(IDX)p * (IDX)ys.s2 + (IDX)q * (IDX)ys.s3] = row[s];
            }
        }
    }
}

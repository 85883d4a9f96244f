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

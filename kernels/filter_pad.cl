// Pad: copies an array into the middle of a larger one and fills the borders by numpy.pad's rules
// (border_index in common.cl). Prepended by common.cl. Build options: T, R, IDX, BORDER, WG (work-group size).
//
// The output is walked as rows along its last axis: one work-group covers WG consecutive elements of one row,
// groups numbered x-block fastest in a 1-D range (no per-dimension grid limits). The row's source offset — or
// the fact that the whole row lies in the border — is worked out once per work-item from the row index over
// the other (up to 7) axes; along the row only the last axis is mapped.

#define PAD_AXIS(k, c) \
    if ((k) < nd) { \
        const IDX extent = (IDX)out_shape.c; \
        const int o = (int)(r % extent); \
        r /= extent; \
        const int i = border_index(o - (int)before.c, (int)in_shape.c); \
        if (i < 0) outside = 1; else src_row += (IDX)i * (IDX)src_stride.c; \
        dst_row += (IDX)o * (IDX)dst_stride.c; \
    }

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void pad(__global const T* restrict src, IDX src_off, __global T* restrict dst, IDX dst_off,
         uint nd, ulong8 out_shape, ulong8 in_shape, ulong8 before, ulong8 src_stride, ulong8 dst_stride,
         int n_last, int out_last, int before_last, IDX src_step, IDX dst_step, IDX x_blocks, IDX groups, T value)
{
    for (IDX g = (IDX)get_group_id(0); g < groups; g += (IDX)get_num_groups(0)) {
        IDX r = g / x_blocks;
        const int x0 = (int)(g - r * x_blocks) * (WG * EPT) + (int)get_local_id(0);
        IDX src_row = src_off, dst_row = dst_off;
        int outside = 0;
        PAD_AXIS(6, s6) PAD_AXIS(5, s5) PAD_AXIS(4, s4) PAD_AXIS(3, s3)
        PAD_AXIS(2, s2) PAD_AXIS(1, s1) PAD_AXIS(0, s0)
        #pragma unroll
        for (int k = 0; k < EPT; ++k) {
            const int x = (x0 + k * WG) * VW;
            if (x >= out_last) break;
#if VW > 1
            // A whole run inside the source row: VW loads and one vector store.
            if (!outside && x + VW <= out_last && x >= before_last && x + VW <= before_last + n_last) {
                Run run;
                #pragma unroll
                for (int v = 0; v < VW; ++v) run.s[v] = src[src_row + (IDX)(x - before_last + v) * src_step];
                *(__global VT*)(dst + dst_row + (IDX)x) = run.v;
                continue;
            }
#endif
            for (int v = 0; v < VW && x + v < out_last; ++v) {
                const int i = border_index(x + v - before_last, n_last);
                dst[dst_row + (IDX)(x + v) * dst_step] = (outside || i < 0) ? value : src[src_row + (IDX)i * src_step];
            }
        }
    }
}

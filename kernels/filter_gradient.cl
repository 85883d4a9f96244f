// GradientMagnitude of the 3-tap derivative stencils (Sobel, Prewitt, Scharr) in one kernel: every derivative
// is [-1, 0, 1] along its axis times the smoothing [SIDE, CENTRE, SIDE] along the others, so the magnitude
// sqrt(sum_k g_k^2) needs only the 3^rank neighbourhood of each output. One pass reads the image once and
// writes the result once, where one convolution per axis and a magnitude kernel moved it rank + 1 times.
//
// Options: T (a real type), IDX, BORDER (border_index in common.cl), TX and TY (the 2-D work-group).
// Arguments: the image and the output with their offsets, shape = (nz, ny, nx, batch) — nz = 1 in 2-D — and
// strides (batch, z, y, x) of each, in elements; side and centre, the smoothing weights; value, the constant
// border's.

// The element at (z, y, x) of batch entry b through the border rule (the constant outside for BORDER_CONSTANT).
inline T gradient_at(__global const T* src, const ulong8 st, const int4 shape, const int z, const int y,
                     const int x, const T value) {
    const int zz = border_index(z, shape.s0), yy = border_index(y, shape.s1), xx = border_index(x, shape.s2);
    if (zz < 0 || yy < 0 || xx < 0) return value;
    return src[(IDX)zz * (IDX)st.s1 + (IDX)yy * (IDX)st.s2 + (IDX)xx * (IDX)st.s3];
}

// 2-D: a TX x TY tile of outputs per work-group, its (TX + 2) x (TY + 2) neighbourhood staged in local memory
// once (rows of the image read contiguously), then each work-item's two derivatives from the tile.
__kernel __attribute__((reqd_work_group_size(TX, TY, 1)))
void gradient_magnitude_2d(__global const T* src, const IDX src_off, __global T* dst, const IDX dst_off,
                           const int4 shape, const ulong8 in_st, const ulong8 out_st, const T side,
                           const T centre, const T value) {
    __local T tile[TY + 2][TX + 2];
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int x0 = get_group_id(0) * TX, y0 = get_group_id(1) * TY;
    const IDX b = get_global_id(2);
    __global const T* in = src + src_off + b * (IDX)in_st.s0;
    for (int i = ly * TX + lx; i < (TX + 2) * (TY + 2); i += TX * TY) {
        const int ty = i / (TX + 2), tx = i - ty * (TX + 2);
        tile[ty][tx] = gradient_at(in, in_st, shape, 0, y0 + ty - 1, x0 + tx - 1, value);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int x = x0 + lx, y = y0 + ly;
    if (x >= shape.s2 || y >= shape.s1) return;
    const T gx = side * (tile[ly][lx + 2] - tile[ly][lx]) + centre * (tile[ly + 1][lx + 2] - tile[ly + 1][lx]) +
                 side * (tile[ly + 2][lx + 2] - tile[ly + 2][lx]);
    const T gy = side * (tile[ly + 2][lx] - tile[ly][lx]) + centre * (tile[ly + 2][lx + 1] - tile[ly][lx + 1]) +
                 side * (tile[ly + 2][lx + 2] - tile[ly][lx + 2]);
    dst[dst_off + b * (IDX)out_st.s0 + (IDX)y * (IDX)out_st.s2 + (IDX)x * (IDX)out_st.s3] = sqrt(gx * gx + gy * gy);
}

// 3-D: one output per work-item over (x, y, z + nz * b), its 27 neighbours read through the caches.
__kernel void gradient_magnitude_3d(__global const T* src, const IDX src_off, __global T* dst, const IDX dst_off,
                                    const int4 shape, const ulong8 in_st, const ulong8 out_st, const T side,
                                    const T centre, const T value) {
    const int x = get_global_id(0), y = get_global_id(1);
    const int zb = get_global_id(2);
    if (x >= shape.s2 || y >= shape.s1) return;
    const int z = zb % shape.s0;
    const IDX b = zb / shape.s0;
    __global const T* in = src + src_off + b * (IDX)in_st.s0;
    T v[3][3][3];
    for (int dz = 0; dz < 3; dz++)
        for (int dy = 0; dy < 3; dy++)
            for (int dx = 0; dx < 3; dx++)
                v[dz][dy][dx] = gradient_at(in, in_st, shape, z + dz - 1, y + dy - 1, x + dx - 1, value);
    const T s[3] = {side, centre, side};
    T gz = 0, gy = 0, gx = 0;
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            const T w = s[i] * s[j];
            gz += w * (v[2][i][j] - v[0][i][j]);
            gy += w * (v[i][2][j] - v[i][0][j]);
            gx += w * (v[i][j][2] - v[i][j][0]);
        }
    }
    dst[dst_off + b * (IDX)out_st.s0 + (IDX)z * (IDX)out_st.s1 + (IDX)y * (IDX)out_st.s2 + (IDX)x * (IDX)out_st.s3] =
        sqrt(gz * gz + gy * gy + gx * gx);
}

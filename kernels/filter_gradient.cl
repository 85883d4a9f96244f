// GradientMagnitude of the 3-tap derivative stencils (Sobel, Prewitt, Scharr) in one kernel: every derivative
// is [-1, 0, 1] along its axis times the smoothing [SIDE, CENTRE, SIDE] along the others, so the magnitude
// sqrt(sum_k g_k^2) needs only the 3^rank neighbourhood of each output. One pass reads the image once and
// writes the result once, where one convolution per axis and a magnitude kernel moved it rank + 1 times.
//
// Options: T (a real type), IDX, BORDER (border_index in common.cl), TX (the 2-D work-group's width) and RY
// (rows per work-item in 2-D).
// Arguments: the image and the output with their offsets, shape = (nz, ny, nx, batch) — nz = 1 in 2-D — and
// strides (batch, z, y, x) of each, in elements; side and centre, the smoothing weights; value, the constant
// border's.

// Element-wise stages a Pipeline fused after the magnitude (src/process/elementwise/epilogue.rs, as in filter.cl):
// a generated `epilogue` placed before this file computes them from each value stored, at its element counted from
// the output's offset. STORE_MAG stores a magnitude and hands it on.
#ifndef HAS_EPILOGUE
#define EPILOGUE_PARAMS
#define EPILOGUE(at, v) (void)(at)
#endif
#define STORE_MAG(p, v) \
    do { \
        __global T* p_ = (p); \
        const T v_ = (v); \
        *p_ = v_; \
        EPILOGUE((IDX)(p_ - (dst + dst_off)), v_); \
    } while (0)

// The element at (z, y, x) of batch entry b through the border rule (the constant outside for BORDER_CONSTANT).
inline T gradient_at(__global const T* src, const ulong8 st, const int4 shape, const int z, const int y,
                     const int x, const T value) {
    const int zz = border_index(z, shape.s0), yy = border_index(y, shape.s1), xx = border_index(x, shape.s2);
    if (zz < 0 || yy < 0 || xx < 0) return value;
    return src[(IDX)zz * (IDX)st.s1 + (IDX)yy * (IDX)st.s2 + (IDX)xx * (IDX)st.s3];
}

// 2-D: each work-item walks RY rows of one column, keeping the last three rows' horizontal smoothing h and
// difference d in registers: gx(y) = side·d(y−1) + centre·d(y) + side·d(y+1), gy(y) = h(y+1) − h(y−1). Each row
// costs three loads that neighbouring work-items share through the caches; columns and rows inside the image
// skip the border rule. (A tile staged in local memory ran at 28 % of the copy bandwidth on the H200.)
inline void gradient_row_2d(__global const T* in, const ulong8 st, const int4 shape, const int y, const int x,
                            const int inside, const T side, const T centre, const T value, T* h, T* d) {
    T l, m, r;
    if (inside) {
        __global const T* row = in + (IDX)y * (IDX)st.s2 + (IDX)x * (IDX)st.s3;
        l = row[-(long)st.s3];
        m = row[0];
        r = row[st.s3];
    } else {
        l = gradient_at(in, st, shape, 0, y, x - 1, value);
        m = gradient_at(in, st, shape, 0, y, x, value);
        r = gradient_at(in, st, shape, 0, y, x + 1, value);
    }
    *h = side * (l + r) + centre * m;
    *d = r - l;
}

__kernel __attribute__((reqd_work_group_size(TX, 1, 1)))
void gradient_magnitude_2d(__global const T* src, const IDX src_off, __global T* dst, const IDX dst_off,
                           const int4 shape, const ulong8 in_st, const ulong8 out_st, const T side,
                           const T centre, const T value EPILOGUE_PARAMS) {
    const int x = get_global_id(0), y0 = get_global_id(1) * RY;
    if (x >= shape.s2 || y0 >= shape.s1) return;
    const IDX b = get_global_id(2);
    __global const T* in = src + src_off + b * (IDX)in_st.s0;
    __global T* out = dst + dst_off + b * (IDX)out_st.s0 + (IDX)x * (IDX)out_st.s3;
    const int inside = x > 0 && x + 1 < shape.s2 && y0 > 0 && y0 + RY < shape.s1;
    if (inside) {
        // Every row's loads issued together (no early exit), so the memory system sees them at once.
        T h[RY + 2], d[RY + 2];
#pragma unroll
        for (int k = 0; k < RY + 2; k++) gradient_row_2d(in, in_st, shape, y0 + k - 1, x, 1, side, centre, value, &h[k], &d[k]);
#pragma unroll
        for (int k = 0; k < RY; k++) {
            const T gx = side * (d[k] + d[k + 2]) + centre * d[k + 1];
            const T gy = h[k + 2] - h[k];
            STORE_MAG(out + (IDX)(y0 + k) * (IDX)out_st.s2, sqrt(gx * gx + gy * gy));
        }
        return;
    }
    T h0, d0, h1, d1, h2, d2;
    gradient_row_2d(in, in_st, shape, y0 - 1, x, inside, side, centre, value, &h0, &d0);
    gradient_row_2d(in, in_st, shape, y0, x, inside, side, centre, value, &h1, &d1);
    for (int k = 0; k < RY; k++) {
        const int y = y0 + k;
        if (y >= shape.s1) return;
        gradient_row_2d(in, in_st, shape, y + 1, x, inside, side, centre, value, &h2, &d2);
        const T gx = side * (d0 + d2) + centre * d1;
        const T gy = h2 - h0;
        STORE_MAG(out + (IDX)y * (IDX)out_st.s2, sqrt(gx * gx + gy * gy));
        h0 = h1; d0 = d1; h1 = h2; d1 = d2;
    }
}

// 3-D: one output per work-item over (x, y, z + nz * b), its 27 neighbours read through the caches.
__kernel void gradient_magnitude_3d(__global const T* src, const IDX src_off, __global T* dst, const IDX dst_off,
                                    const int4 shape, const ulong8 in_st, const ulong8 out_st, const T side,
                                    const T centre, const T value EPILOGUE_PARAMS) {
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
    const IDX at = b * (IDX)out_st.s0 + (IDX)z * (IDX)out_st.s1 + (IDX)y * (IDX)out_st.s2 + (IDX)x * (IDX)out_st.s3;
    STORE_MAG(dst + dst_off + at, sqrt(gz * gz + gy * gy + gx * gx));
}

#ifdef GAUSS_RY
// scipy's gaussian_gradient_magnitude in 2-D as one kernel: gx = Gy ⊛ (G'x ⊛ x) and gy = G'y ⊛ (Gx ⊛ x), the
// correlations of the separable Gaussian derivative filters, then sqrt(gx² + gy²). A work-group of TX work-items
// computes TX adjacent columns × RY rows, one column per work-item. The RY + 2·GAUSS_RY input rows it needs pass
// through local memory GROWS at a time, each row segment (TX + 2·GAUSS_RX values, through the border rule) read
// from global memory once, at unit stride; every work-item then takes both horizontal sums of its column
// (smoothing and derivative) from local memory, at unit stride across the group, and adds them into the vertical
// sums of the output rows that row reaches, kept in registers. Loops unroll by the radii, so which output rows a
// row reaches is known when compiling, and the weights (literals) are operands.
// Options beyond the 3-tap kernels': GAUSS_RY, GAUSS_RX (the radii along y and x) and the weights in correlation
// order: GAUSS_WY0 (Gy, 2·GAUSS_RY + 1 of them), GAUSS_WY1 (G'y), GAUSS_WX0 (Gx, 2·GAUSS_RX + 1), GAUSS_WX1 (G'x).
#define GNY (2 * GAUSS_RY + 1)
#define GNX (2 * GAUSS_RX + 1)
#define GWIDE (TX + 2 * GAUSS_RX)
#define GIN (RY + 2 * GAUSS_RY)
#define GROWS 8
__constant T wy0[GNY] = {GAUSS_WY0};
__constant T wy1[GNY] = {GAUSS_WY1};
__constant T wx0[GNX] = {GAUSS_WX0};
__constant T wx1[GNX] = {GAUSS_WX1};

__kernel __attribute__((reqd_work_group_size(TX, 1, 1)))
void gaussian_gradient_magnitude_2d(__global const T* src, const IDX src_off, __global T* dst, const IDX dst_off,
                                    const int4 shape, const ulong8 in_st, const ulong8 out_st,
                                    const T value EPILOGUE_PARAMS) {
    __local T rows[GROWS][GWIDE];
    const int lx = get_local_id(0);
    const int x0 = get_group_id(0) * TX, y0 = get_global_id(1) * RY;
    const IDX b = get_global_id(2);
    __global const T* in = src + src_off + b * (IDX)in_st.s0;
    T gx[RY], gy[RY];
#pragma unroll
    for (int o = 0; o < RY; o++) {
        gx[o] = ZERO;
        gy[o] = ZERO;
    }
#pragma unroll
    for (int k0 = 0; k0 < GIN; k0 += GROWS) {
        // GROWS rows (fewer at the end) of the window into local memory, every work-item loading its share.
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int e = lx; e < GROWS * GWIDE; e += TX) {
            const int r = e / GWIDE, j = e % GWIDE;
            if (k0 + r < GIN)
                rows[r][j] = gradient_at(in, in_st, shape, 0, y0 - GAUSS_RY + k0 + r, x0 - GAUSS_RX + j, value);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
        for (int r = 0; r < GROWS; r++) {
            const int k = k0 + r;
            if (k < GIN) {
                T h = ZERO, d = ZERO;
#pragma unroll
                for (int j = 0; j < GNX; j++) {
                    const T v = rows[r][lx + j];
                    h += wx0[j] * v;
                    d += wx1[j] * v;
                }
#pragma unroll
                for (int o = 0; o < RY; o++) {
                    const int i = k - o;
                    if (i >= 0 && i < GNY) {
                        gx[o] += wy0[i] * d;
                        gy[o] += wy1[i] * h;
                    }
                }
            }
        }
    }
    const int x = x0 + lx;
    if (x >= shape.s2) return;
    __global T* out = dst + dst_off + b * (IDX)out_st.s0 + (IDX)x * (IDX)out_st.s3;
#pragma unroll
    for (int o = 0; o < RY; o++) {
        const int y = y0 + o;
        if (y < shape.s1) STORE_MAG(out + (IDX)y * (IDX)out_st.s2, sqrt(gx[o] * gx[o] + gy[o] * gy[o]));
    }
}
#endif

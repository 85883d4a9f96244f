// Resampling: scipy.ndimage's spline prefilter, zoom/shift (one separable pass per axis) and the general
// transforms (affine, rotate, map_coordinates: one gather per output element). Arrays are seen as [w, z, y, x]
// views (w: the untouched leading axes merged). Build options beyond the common ones:
//   ORDER        spline order 0..5
// The boundary mode (MODE_* below) and the rule for spline taps past the edge travel as run-time arguments: one
// program serves every mode (on PoCL each program costs 1–3 s to build; the mode decides only at edges).
//   COORD        float or double: the precision of device-side coordinates (double where the device has fp64)
//   MAP_COORDS   1: coordinates come from an array (map_coordinates); 0: from an affine matrix
//   PASS_Z/Y/X   1 where that axis is not interpolated (the output index is the input index)

#ifndef COORD
#define COORD float
#endif
#ifndef MAP_COORDS
#define MAP_COORDS 0
#endif
#ifndef PASS_Z
#define PASS_Z 0
#endif
#ifndef PASS_Y
#define PASS_Y 0
#endif
#ifndef PASS_X
#define PASS_X 0
#endif

#define MODE_CONSTANT 0
#define MODE_GRID_CONSTANT 1
#define MODE_NEAREST 2
#define MODE_REFLECT 3
#define MODE_MIRROR 4
#define MODE_WRAP 5
#define MODE_GRID_WRAP 6

#if defined(COORD_DOUBLE) && COORD_DOUBLE && !IS_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

// ---------------------------------------------------------------------------------------------------------------
// The B-spline prefilter (Unser, Aldroubi and Eden 1991; scipy's boundary initialisations): one work-item per line,
// the line copied (and padded by `pad` samples each side with the edge value or cval) into the target, then for
// every pole a causal and an anticausal recursion in place. The initial values' sums stop once z^i is below a
// thousandth of the precision: the terms left out change no digit (scipy sums the whole line).

#if ORDER == 2
#define NPOLES 1
#define POLE0 ((R)-0.171572875253809902396622551580603843)
#define POLE1 ((R)0)
#elif ORDER == 3
#define NPOLES 1
#define POLE0 ((R)-0.267949192431122706472553658494127633)
#define POLE1 ((R)0)
#elif ORDER == 4
#define NPOLES 2
#define POLE0 ((R)-0.361341225900220177092212841325675255)
#define POLE1 ((R)-0.013725429297339121360331226939128204)
#elif ORDER == 5
#define NPOLES 2
#define POLE0 ((R)-0.430575347099973791851434783493520110)
#define POLE1 ((R)-0.043096288203264653822712376822550182)
#else
#define NPOLES 0
#define POLE0 ((R)0)
#define POLE1 ((R)0)
#endif

#if IS_DOUBLE
#define TINY ((R)2.2e-19)
#else
#define TINY ((R)1.2e-10)
#endif

#define INIT_MIRROR 0
#define INIT_REFLECT 1
#define INIT_WRAP 2

// One pole's two recursions over the m samples c[0], c[s], … (m > 1).
inline void spline_pole(global T *c, const IDX s, const IDX m, const R z, const int init) {
    R zi = z;
    if (init == INIT_MIRROR) {
        const R zn1 = pown(z, (int)(m - 1));
        T c0 = c[0] + zn1 * c[(m - 1) * s];
        for (IDX i = 1; i + 1 < m && fabs(zi) > TINY; ++i) {
            c0 += zi * (c[i * s] + zn1 * c[(m - 1 - i) * s]);
            zi *= z;
        }
        c[0] = c0 / ((R)1 - zn1 * zn1);
    } else if (init == INIT_REFLECT) {
        const R zn = pown(z, (int)m);
        const T first = c[0];
        T acc = c[0] + zn * c[(m - 1) * s];
        for (IDX i = 1; i < m && fabs(zi) > TINY; ++i) {
            acc += zi * (c[i * s] + zn * c[(m - 1 - i) * s]);
            zi *= z;
        }
        c[0] = acc * (z / ((R)1 - zn * zn)) + first;
    } else {
        T acc = c[0];
        for (IDX i = 1; i < m && fabs(zi) > TINY; ++i) {
            acc += zi * c[(m - i) * s];
            zi *= z;
        }
        c[0] = acc / ((R)1 - pown(z, (int)m));
    }
    T prev = c[0];
    for (IDX i = 1; i < m; ++i) {
        prev = c[i * s] + z * prev;
        c[i * s] = prev;
    }
    if (init == INIT_MIRROR) {
        c[(m - 1) * s] = (z * c[(m - 2) * s] + c[(m - 1) * s]) * (z / (z * z - (R)1));
    } else if (init == INIT_REFLECT) {
        c[(m - 1) * s] *= z / (z - (R)1);
    } else {
        T acc = c[(m - 1) * s];
        zi = z;
        for (IDX i = 0; i + 1 < m && fabs(zi) > TINY; ++i) {
            acc += zi * c[i * s];
            zi *= z;
        }
        c[(m - 1) * s] = acc * (z / (pown(z, (int)m) - (R)1));
    }
    T next = c[(m - 1) * s];
    for (IDX i = m - 1; i-- > 0;) {
        next = z * (next - c[i * s]);
        c[i * s] = next;
    }
}

kernel void spline_prefilter(global const T *x, IDX x0, IDX xsw, IDX xsz, IDX xsy, IDX xsx, global T *y, IDX y0,
                             IDX ysw, IDX ysz, IDX ysy, IDX ysx, IDX nw, IDX nz, IDX ny, IDX nx, int axis, IDX pad,
                             int pad_edge, T cval, int init) {
    const IDX n = axis == 0 ? nz : (axis == 1 ? ny : nx);
    const IDX m = n + 2 * pad;
    const IDX lines = nw * nz * ny * nx / n;
    R gain = (R)1;
    if (NPOLES > 0) gain *= ((R)1 - POLE0) * ((R)1 - (R)1 / POLE0);
    if (NPOLES > 1) gain *= ((R)1 - POLE1) * ((R)1 - (R)1 / POLE1);
    for (IDX line = get_global_id(0); line < lines; line += get_global_size(0)) {
        const IDX ez = axis == 0 ? 1 : nz, ey = axis == 1 ? 1 : ny, ex = axis == 2 ? 1 : nx;
        IDX t = line;
        const IDX cx = t % ex;
        t /= ex;
        const IDX cy = t % ey;
        t /= ey;
        const IDX cz = t % ez;
        const IDX cw = t / ez;
        const IDX xs = axis == 0 ? xsz : (axis == 1 ? xsy : xsx);
        const IDX ys = axis == 0 ? ysz : (axis == 1 ? ysy : ysx);
        const global T *src = x + x0 + cw * xsw + cz * xsz + cy * xsy + cx * xsx;
        global T *c = y + y0 + cw * ysw + cz * ysz + cy * ysy + cx * ysx;
        // A single sample has nothing to filter (scipy leaves it as it is, gain included).
        const R g = m > 1 ? gain : (R)1;
        for (IDX i = 0; i < m; ++i) {
            T v;
            if (i < pad || i >= pad + n) {
                v = pad_edge ? src[(i < pad ? 0 : n - 1) * xs] : cval;
            } else {
                v = src[(i - pad) * xs];
            }
            c[i * ys] = g * v;
        }
        if (m > 1) {
            if (NPOLES > 0) spline_pole(c, ys, m, POLE0, init);
            if (NPOLES > 1) spline_pole(c, ys, m, POLE1, init);
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Where an integer spline tap outside [0, n) lands under `tap_mode` (scipy maps it through map_coordinate with
// the spline boundary mode; grid-constant taps read cval and never come here).
inline long map_tap(long i, const long n, const int tap_mode) {
    if (n <= 1) return 0;
    if (tap_mode == MODE_NEAREST) return i < 0 ? 0 : n - 1;
    if (tap_mode == MODE_REFLECT) {
        const long s2 = 2 * n;
        if (i < 0) {
            if (i < -s2) i = s2 * (-i / s2) + i;
            return i < -n ? i + s2 : -i - 1;
        }
        i -= s2 * (i / s2);
        return i >= n ? s2 - i - 1 : i;
    }
    if (tap_mode == MODE_GRID_WRAP) {
        if (i < 0) return i + n * ((-1 - i) / n + 1);
        return i - n * (i / n);
    }
    // Mirror (also the spline boundary of constant and wrap).
    const long s2 = 2 * n - 2;
    if (i < 0) {
        i = s2 * (-i / s2) + i;
        return i <= 1 - n ? i + s2 : -i;
    }
    i -= s2 * (i / s2);
    return i >= n ? s2 - i : i;
}


// The prefilter as a convolution (GPUs): the recursions' combined impulse response is symmetric and decays as
// |z|^k, so `taps[0..=reach]` (computed on the host, cut where the tail is below a thousandth of the precision)
// filter each output from its neighbours along `axis` — every output in parallel, where the recursion has one
// work-item per line. The line is extended as the recursions' boundary assumes (`ext_mode`: mirror, reflect or
// grid-wrap, over the padded length), so both give the same coefficients. Padding (`pad` samples each side: the
// edge value, or cval) happens on the fly. 1-D range over the output (nw·nz·ny·nx elements).
kernel void spline_fir(global const T *x, IDX x0, IDX xsw, IDX xsz, IDX xsy, IDX xsx, global T *y, IDX y0, IDX ysw,
                       IDX ysz, IDX ysy, IDX ysx, IDX nw, IDX nz, IDX ny, IDX nx, int axis, IDX n, IDX pad,
                       int pad_edge, T cval, int ext_mode, global const R *taps, int reach) {
    const IDX g = get_global_id(0);
    if (g >= nw * nz * ny * nx) return;
    const IDX cx = g % nx;
    const IDX r = g / nx;
    const IDX cy = r % ny;
    const IDX cz = (r / ny) % nz;
    const IDX cw = r / ny / nz;
    const IDX i = axis == 0 ? cz : (axis == 1 ? cy : cx);
    const IDX xs = axis == 0 ? xsz : (axis == 1 ? xsy : xsx);
    const IDX base = x0 + cw * xsw + (axis == 0 ? 0 : cz * xsz) + (axis == 1 ? 0 : cy * xsy) + (axis == 2 ? 0 : cx * xsx);
    const long m = (long)(n + 2 * pad);
    T acc = (T)0;
    if (pad == 0 && (long)i >= reach && (long)i + reach < m) {
        const global T *c = x + base + i * xs;
        acc = taps[0] * c[0];
        for (int k = 1; k <= reach; ++k) acc += taps[k] * (c[(long)k * (long)xs] + c[-(long)k * (long)xs]);
    } else {
        for (int k = -reach; k <= reach; ++k) {
            const long p = map_tap((long)i + k, m, ext_mode);
            T v;
            if (p < (long)pad || p >= (long)(pad + n)) {
                v = pad_edge ? x[base + (p < (long)pad ? 0 : n - 1) * xs] : cval;
            } else {
                v = x[base + (IDX)(p - (long)pad) * xs];
            }
            acc += taps[k < 0 ? -k : k] * v;
        }
    }
    y[y0 + cw * ysw + cz * ysz + cy * ysy + cx * ysx] = acc;
}

// One separable pass along `axis`: output index k along the axis reads the row k of `table`:
// [first tap, 1 if the output is cval, ORDER + 1 weights] (computed on the host in float64 exactly as scipy's
// NI_ZoomShift does; the first tap is held as a real, exact below 2^24, which the host checks).
kernel void resample_axis(global const T *x, IDX x0, IDX xsw, IDX xsz, IDX xsy, IDX xsx, global T *y, IDX y0,
                          IDX ysw, IDX ysz, IDX ysy, IDX ysx, IDX nw, IDX nz, IDX ny, IDX nx, int axis, IDX n_in,
                          global const R *table, T cval, int mode, int tap_mode) {
    // A 1-D range: NVIDIA's second dimension stops at 65535 groups.
    const IDX g = get_global_id(0);
    if (g >= nw * nz * ny * nx) return;
    const IDX cx = g % nx;
    const IDX row = g / nx;
    const IDX cy = row % ny;
    const IDX cz = (row / ny) % nz;
    const IDX cw = row / ny / nz;
    const IDX k = axis == 0 ? cz : (axis == 1 ? cy : cx);
    const IDX xs = axis == 0 ? xsz : (axis == 1 ? xsy : xsx);
    // The input element at the same place on the other axes, index 0 on the pass axis.
    const IDX base = x0 + cw * xsw + (axis == 0 ? 0 : cz * xsz) + (axis == 1 ? 0 : cy * xsy) + (axis == 2 ? 0 : cx * xsx);
    const global R *r = table + k * (ORDER + 3);
    T acc = (T)0;
    if (r[1] != (R)0) {
        acc = cval;
    } else {
        const long start = (long)r[0];
        acc = (T)0;
        if (start >= 0 && start + ORDER < (long)n_in) {
#pragma unroll
            for (int t = 0; t <= ORDER; ++t) acc += r[2 + t] * x[base + (IDX)(start + t) * xs];
        } else {
#pragma unroll
            for (int t = 0; t <= ORDER; ++t) {
                const long i = start + t;
                T v;
                if (i >= 0 && i < (long)n_in) {
                    v = x[base + (IDX)i * xs];
                } else if (mode == MODE_GRID_CONSTANT) {
                    v = cval;
                } else {
                    v = x[base + (IDX)map_tap(i, (long)n_in, tap_mode) * xs];
                }
                acc += r[2 + t] * v;
            }
        }
    }
    y[y0 + cw * ysw + cz * ysz + cy * ysy + cx * ysx] = acc;
}

// ---------------------------------------------------------------------------------------------------------------
// The general transforms: every output element computes its input coordinate (an affine map of its index, or a
// row of the coordinate array), then per axis the first tap, the weights and the mapped taps, and sums the
// (ORDER + 1)^axes products, as scipy's NI_GeometricTransform.

// scipy's map_coordinate for a coordinate outside [0, n − 1] (-1: outside, for MODE_CONSTANT; grid-constant and
// nearest are not mapped).
inline COORD map_coord(COORD c, const long n, const int mode) {
    const COORD len = (COORD)n;
    if (c >= 0 && c <= len - 1) return c;
    if (mode == MODE_CONSTANT) return -1;
    if (mode == MODE_GRID_CONSTANT || mode == MODE_NEAREST) return c;
    if (n <= 1) return 0;
    if (c < 0) {
        if (mode == MODE_MIRROR) {
            const COORD s2 = 2 * len - 2;
            c = s2 * (COORD)(long)(-c / s2) + c;
            return c <= 1 - len ? c + s2 : -c;
        }
        if (mode == MODE_REFLECT) {
            const COORD s2 = 2 * len;
            if (c < -s2) c = s2 * (COORD)(long)(-c / s2) + c;
            return c < -len ? c + s2 : (c > (COORD)-1e-15 ? (COORD)1e-15 : -c) - 1;
        }
        if (mode == MODE_WRAP) {
            const COORD s = len - 1;
            return c + s * ((COORD)(long)(-c / s) + 1);
        }
        return c + len * ((COORD)(long)((-1 - c) / len) + 1);
    }
    if (mode == MODE_MIRROR) {
        const COORD s2 = 2 * len - 2;
        c -= s2 * (COORD)(long)(c / s2);
        return c >= len ? s2 - c : c;
    }
    if (mode == MODE_REFLECT) {
        const COORD s2 = 2 * len;
        c -= s2 * (COORD)(long)(c / s2);
        return c >= len ? s2 - c - 1 : c;
    }
    if (mode == MODE_WRAP) {
        const COORD s = len - 1;
        return c - s * (COORD)(long)(c / s);
    }
    return c - len * (COORD)(long)(c / len);
}

// The taps (input indices, -1 for a cval tap) and weights of one axis for coordinate c; 0 when the whole output
// is cval (a MODE_CONSTANT coordinate outside the input).
inline int axis_taps(COORD c, const long n, const int mode, const int tap_mode, long *taps, R *w) {
    c = map_coord(c, n, mode);
    if (!(c > -1) && mode != MODE_GRID_CONSTANT && mode != MODE_NEAREST) return 0;
#if ORDER % 2 == 1
    const COORD centre = floor(c);
#else
    const COORD centre = floor(c + (COORD)0.5);
#endif
    const long start = (long)centre - ORDER / 2;
    const COORD u = c - centre;
    COORD v[6];
#if ORDER == 0
    v[0] = 1;
#elif ORDER == 1
    v[0] = 1 - u;
#elif ORDER == 2
    v[1] = (COORD)0.75 - u * u;
    v[0] = (COORD)0.5 * ((COORD)0.5 - u) * ((COORD)0.5 - u);
#elif ORDER == 3
    const COORD z3 = 1 - u;
    v[1] = (u * u * (u - 2) * 3 + 4) / 6;
    v[2] = (z3 * z3 * (z3 - 2) * 3 + 4) / 6;
    v[0] = z3 * z3 * z3 / 6;
#elif ORDER == 4
    const COORD z4 = 1 - u;
    COORD t4 = u * u;
    v[2] = t4 * (t4 * (COORD)0.25 - (COORD)0.625) + (COORD)115.0 / 192;
    const COORD y4 = 1 + u;
    v[1] = y4 * (y4 * (y4 * (5 - y4) / 6 - (COORD)1.25) + (COORD)5.0 / 24) + (COORD)55.0 / 96;
    v[3] = z4 * (z4 * (z4 * (5 - z4) / 6 - (COORD)1.25) + (COORD)5.0 / 24) + (COORD)55.0 / 96;
    t4 = ((COORD)0.5 - u) * ((COORD)0.5 - u);
    v[0] = t4 * t4 / 24;
#elif ORDER == 5
    const COORD z5 = 1 - u;
    COORD t5 = u * u;
    v[2] = t5 * (t5 * ((COORD)0.25 - u / 12) - (COORD)0.5) + (COORD)0.55;
    t5 = z5 * z5;
    v[3] = t5 * (t5 * ((COORD)0.25 - z5 / 12) - (COORD)0.5) + (COORD)0.55;
    const COORD y5 = u + 1;
    v[1] = y5 * (y5 * (y5 * (y5 * (y5 / 24 - (COORD)0.375) + (COORD)1.25) - (COORD)1.75) + (COORD)0.625) +
           (COORD)0.425;
    const COORD w5 = z5 + 1;
    v[4] = w5 * (w5 * (w5 * (w5 * (w5 / 24 - (COORD)0.375) + (COORD)1.25) - (COORD)1.75) + (COORD)0.625) +
           (COORD)0.425;
    t5 = z5 * z5;
    v[0] = z5 * t5 * t5 / 120;
#endif
#if ORDER > 0
    COORD rest = 0;
#pragma unroll
    for (int t = 0; t < ORDER; ++t) rest += v[t];
    v[ORDER] = 1 - rest;
#endif
#pragma unroll
    for (int t = 0; t <= ORDER; ++t) {
        w[t] = (R)v[t];
        const long i = start + t;
        taps[t] = (i >= 0 && i < n) ? i : (mode == MODE_GRID_CONSTANT ? -1 : map_tap(i, n, tap_mode));
    }
    return 1;
}

#if PASS_Z
#define OZ 0
#else
#define OZ ORDER
#endif
#if PASS_Y
#define OY 0
#else
#define OY ORDER
#endif
#if PASS_X
#define OX 0
#else
#define OX ORDER
#endif

kernel void resample_gather(global const T *x, IDX x0, IDX xsw, IDX xsz, IDX xsy, IDX xsx, IDX inz, IDX iny, IDX inx,
                            global T *y, IDX y0, IDX ysw, IDX ysz, IDX ysy, IDX ysx, IDX nw, IDX nz, IDX ny, IDX nx,
                            global const R *coords, IDX cstride, COORD m00, COORD m01, COORD m02, COORD m10,
                            COORD m11, COORD m12, COORD m20, COORD m21, COORD m22, COORD o0, COORD o1, COORD o2,
                            COORD pad, T cval, int mode, int tap_mode) {
    const IDX g = get_global_id(0);
    if (g >= nw * nz * ny * nx) return;
    const IDX cx = g % nx;
    const IDX row = g / nx;
    const IDX cy = row % ny;
    const IDX cz = (row / ny) % nz;
    const IDX cw = row / ny / nz;
    COORD c0, c1, c2;
#if MAP_COORDS
    // Coordinates of shape [axes, outputs]: the spatial slots z, y, x take the last rows.
    const IDX flat = (row * nx + cx);
    c0 = PASS_Z ? 0 : (COORD)coords[flat];
    c1 = PASS_Y ? 0 : (COORD)coords[(IDX)(PASS_Z ? 0 : 1) * cstride + flat];
    c2 = PASS_X ? 0 : (COORD)coords[(IDX)((PASS_Z ? 0 : 1) + (PASS_Y ? 0 : 1)) * cstride + flat];
#else
    const COORD fz = (COORD)cz, fy = (COORD)cy, fx = (COORD)cx;
    c0 = m00 * fz + m01 * fy + m02 * fx + o0;
    c1 = m10 * fz + m11 * fy + m12 * fx + o1;
    c2 = m20 * fz + m21 * fy + m22 * fx + o2;
#endif
    long tz[6], ty[6], tx[6];
    R wz[6], wy[6], wx[6];
    int inside = 1;
#if PASS_Z
    tz[0] = (long)cz;
    wz[0] = 1;
#else
    inside = inside && axis_taps(c0 + pad, (long)inz, mode, tap_mode, tz, wz);
#endif
#if PASS_Y
    ty[0] = (long)cy;
    wy[0] = 1;
#else
    inside = inside && axis_taps(c1 + pad, (long)iny, mode, tap_mode, ty, wy);
#endif
#if PASS_X
    tx[0] = (long)cx;
    wx[0] = 1;
#else
    inside = inside && axis_taps(c2 + pad, (long)inx, mode, tap_mode, tx, wx);
#endif
    T acc = cval;
    if (inside) {
        acc = (T)0;
        const global T *src = x + x0 + cw * xsw;
#pragma unroll
        for (int i = 0; i <= OZ; ++i) {
#pragma unroll
            for (int j = 0; j <= OY; ++j) {
                const R wij = wz[i] * wy[j];
#pragma unroll
                for (int k = 0; k <= OX; ++k) {
                    T v;
                    if (tz[i] < 0 || ty[j] < 0 || tx[k] < 0) {
                        v = cval;
                    } else {
                        v = src[(IDX)tz[i] * xsz + (IDX)ty[j] * xsy + (IDX)tx[k] * xsx];
                    }
                    acc += wij * wx[k] * v;
                }
            }
        }
    }
    y[y0 + cw * ysw + cz * ysz + cy * ysy + cx * ysx] = acc;
}

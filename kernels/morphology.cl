// Morphology (DistanceTransform): the exact Euclidean distance transform, one axis at a time (Felzenszwalb and
// Huttenlocher's lower envelope of parabolas), one work-item per line.
//
// The array is walked as [batch, nz, ny, nx] with strides; a pass along `axis` (0: z, 1: y, 2: x) treats every
// line along it. Pass 0 (`first`) turns the input into squared distances 0 (background: zero elements) or +inf;
// every pass replaces each line's values f by min_j f[j] + w·(i − j)², w the squared spacing along the axis.
// `v` and `z` are scratch of (lines × n) and (lines × (n + 1)) elements: the parabolas' sites and boundaries.

kernel void edt_line(global const T *x, IDX x0, IDX xsw, IDX xsz, IDX xsy, IDX xsx, global T *y, IDX y0, IDX ysw,
                     IDX ysz, IDX ysy, IDX ysx, IDX nw, IDX nz, IDX ny, IDX nx, int axis, int first, T w,
                     global T *v, global T *z) {
    const IDX n = axis == 0 ? nz : (axis == 1 ? ny : nx);
    const IDX lines = nw * nz * ny * nx / n;
    for (IDX line = get_global_id(0); line < lines; line += get_global_size(0)) {
        // The line's position on the other axes (the axis itself has extent 1 in this count).
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
        const IDX xb = x0 + cw * xsw + cz * xsz + cy * xsy + cx * xsx;
        const IDX yb = y0 + cw * ysw + cz * ysz + cy * ysy + cx * ysx;
        global T *vs = v + line * n;
        global T *zs = z + line * (n + 1);
        // The lower envelope of the parabolas f[q] + w·(i − q)² of the finite sites.
        long k = -1;
        for (IDX q = 0; q < n; ++q) {
            const T xq = x[xb + q * xs];
            const T fq = first ? (xq == (T)0 ? (T)0 : (T)INFINITY) : xq;
            if (isinf(fq)) continue;
            const T qq = (T)q;
            T s = -(T)INFINITY;
            while (k >= 0) {
                const T p = vs[k];
                const T fp = first ? (T)0 : x[xb + (IDX)p * xs];
                s = ((fq + w * qq * qq) - (fp + w * p * p)) / ((T)2 * w * (qq - p));
                if (s > zs[k]) break;
                --k;
            }
            ++k;
            vs[k] = qq;
            zs[k] = k == 0 ? -(T)INFINITY : s;
            zs[k + 1] = (T)INFINITY;
        }
        if (k < 0) {
            for (IDX q = 0; q < n; ++q) y[yb + q * ys] = (T)INFINITY;
            continue;
        }
        long j = 0;
        for (IDX q = 0; q < n; ++q) {
            const T qq = (T)q;
            while (zs[j + 1] < qq) ++j;
            const T p = vs[j];
            const T fp = first ? (T)0 : x[xb + (IDX)p * xs];
            y[yb + q * ys] = w * (qq - p) * (qq - p) + fp;
        }
    }
}

// Morphology (DistanceTransform): the exact Euclidean distance transform, one axis at a time (Felzenszwalb and
// Huttenlocher's lower envelope of parabolas), one work-item per line.
//
// The array is walked as [batch, nz, ny, nx] with strides; a pass along `axis` (0: z, 1: y, 2: x) treats every
// line along it. Pass 0 (`first`) turns the input into squared distances 0 (background: zero elements) or +inf;
// every pass replaces each line's values f by min_j f[j] + w·(i − j)², w the squared spacing along the axis.
// `v` and `z` are scratch of (lines × n) and (lines × (n + 1)) elements: the parabolas' sites and boundaries.
//
// With `track`, each pass also carries the feature transform: `fs`/`fd` hold, per element (indexed by its C-order
// position in the [batch, z, y, x] extents, whatever the views' strides), the position of the zero element its
// value measures to, NO_FEATURE where there is none yet. Ties go to the lower site along the axis (a boundary
// equal to q keeps the earlier parabola; a parabola whose interval shrinks to a point is dropped, leaving the
// earlier one), which is the choice of scipy's Maurer pass (its scan advances only while the next site is
// strictly nearer).

#define NO_FEATURE 0xFFFFFFFFu

kernel void edt_line(global const T *x, IDX x0, IDX xsw, IDX xsz, IDX xsy, IDX xsx, global T *y, IDX y0, IDX ysw,
                     IDX ysz, IDX ysy, IDX ysx, IDX nw, IDX nz, IDX ny, IDX nx, int axis, int first, T w,
                     global T *v, global T *z, int track, global const uint *fs, global uint *fd) {
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
        // The line's first element and step in C order (the features' indexing).
        const IDX fb = ((cw * nz + cz) * ny + cy) * nx + cx;
        const IDX fstep = axis == 0 ? ny * nx : (axis == 1 ? nx : 1);
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
            for (IDX q = 0; q < n; ++q) {
                y[yb + q * ys] = (T)INFINITY;
                if (track) fd[fb + q * fstep] = NO_FEATURE;
            }
            continue;
        }
        long j = 0;
        for (IDX q = 0; q < n; ++q) {
            const T qq = (T)q;
            while (zs[j + 1] < qq) ++j;
            const T p = vs[j];
            const T fp = first ? (T)0 : x[xb + (IDX)p * xs];
            y[yb + q * ys] = w * (qq - p) * (qq - p) + fp;
            if (track) {
                const IDX at = fb + (IDX)p * fstep;
                fd[fb + q * fstep] = first ? (uint)at : fs[at];
            }
        }
    }
}

// The index array of a feature transform, one axis's component per launch: component `a` of element g (C order)
// is (feature / stride) % extent — the element's own coordinate (g instead of its feature) on an axis the
// transform does not span (`own`). Where no zero was found (NO_FEATURE) the component is `none_value` (scipy's
// -1 on the first axis, 0 on the others). Values travel as T (whole numbers).
kernel void feature_indices(global const uint *features, global T *y, IDX y0, IDX count, IDX stride, IDX extent,
                            int own, int none_value) {
    const IDX g = get_global_id(0);
    if (g >= count) return;
    const uint f = features[g];
    T value;
    if (own) {
        value = (T)((g / stride) % extent);
    } else if (f == NO_FEATURE) {
        value = (T)none_value;
    } else {
        value = (T)(((IDX)f / stride) % extent);
    }
    y[y0 + g] = value;
}

// ---------------------------------------------------------------------------------------------------------------
// Connected components (scipy.ndimage.label) and hole filling (binary_fill_holes) by union-find on the device
// (Playne and Hawick's concurrent union-find): every set element starts as its own root, each is united with its
// set neighbours under the structure by atomic_min on the parents — so every root ends as the smallest linear
// index of its component, the component's first element in raster order — then paths are compressed. Labels are
// numbered in the order of their roots (a count per chunk of elements, a scan per batch item, a walk per chunk),
// which is scipy's numbering. `parent` holds uint indices (in a float array's bytes: arrays hold floats only).
// Hole filling sets the background and shifts indices by one: index 0 is the outside, united with every
// background element that has a structure neighbour outside the array; background not joined to it is a hole.
//
// The [w, z, y, x] views as in edt_line; `offsets` are the structure's (dz, dy, dx, 0) without the centre.

#define NO_PARENT 0xFFFFFFFFu

inline uint find_root(global uint *parent, uint a) {
    uint p = parent[a];
    while (p != a) {
        a = p;
        p = parent[a];
    }
    return a;
}

inline void unite(global uint *parent, uint a, uint b) {
    for (;;) {
        a = find_root(parent, a);
        b = find_root(parent, b);
        if (a == b) return;
        if (a > b) {
            const uint t = a;
            a = b;
            b = t;
        }
        // Hang the larger root under the smaller; if another work-item moved it meanwhile, retry from there.
        const uint old = atomic_min((volatile global uint *)&parent[b], a);
        if (old == b) return;
        b = old;
    }
}

// Whether element (cw, cz, cy, cx) takes part: non-zero for labelling, zero for hole filling.
#define IS_SET(v) (holes ? (v) == (T)0 : (v) != (T)0)

kernel void label_init(global const T *x, IDX x0, IDX xsw, IDX xsz, IDX xsy, IDX xsx, IDX nw, IDX nz, IDX ny,
                       IDX nx, global uint *parent, int holes) {
    const IDX g = get_global_id(0);
    const IDX count = nw * nz * ny * nx;
    if (g == 0 && holes) parent[0] = 0;
    if (g >= count) return;
    const IDX cx = g % nx, cy = (g / nx) % ny, cz = (g / nx / ny) % nz, cw = g / nx / ny / nz;
    const T v = x[x0 + cw * xsw + cz * xsz + cy * xsy + cx * xsx];
    const uint self = (uint)g + (uint)holes;
    parent[self] = IS_SET(v) ? self : NO_PARENT;
}

kernel void label_merge(global const T *x, IDX x0, IDX xsw, IDX xsz, IDX xsy, IDX xsx, IDX nw, IDX nz, IDX ny,
                        IDX nx, global uint *parent, int holes, global const int4 *offsets, int noffsets) {
    const IDX g = get_global_id(0);
    if (g >= nw * nz * ny * nx) return;
    const uint self = (uint)g + (uint)holes;
    if (parent[self] == NO_PARENT) return;
    const long cx = (long)(g % nx), cy = (long)((g / nx) % ny), cz = (long)((g / nx / ny) % nz);
    for (int k = 0; k < noffsets; ++k) {
        const int4 d = offsets[k];
        const long z = cz + d.x, y = cy + d.y, xx = cx + d.z;
        if (z < 0 || y < 0 || xx < 0 || z >= (long)nz || y >= (long)ny || xx >= (long)nx) {
            // A neighbour outside the array: for hole filling, this element reaches the outside.
            if (holes) unite(parent, self, 0);
            continue;
        }
        const long step = ((long)d.x * (long)ny + (long)d.y) * (long)nx + (long)d.z;
        // Each pair once: the neighbour earlier in raster order unites (the structure is symmetric).
        if (step > 0) continue;
        const uint other = (uint)((long)g + step) + (uint)holes;
        if (parent[other] != NO_PARENT) unite(parent, self, other);
    }
}

kernel void label_compress(IDX count, global uint *parent, int holes) {
    const IDX g = get_global_id(0);
    if (g >= count) return;
    const uint self = (uint)g + (uint)holes;
    if (parent[self] != NO_PARENT) parent[self] = find_root(parent, self);
}

// The roots in each chunk of `chunk` elements of each batch item (item-major: counts[w * chunks + c]).
kernel void label_count(IDX per_item, IDX nw, global const uint *parent, global uint *counts, IDX chunk, IDX chunks) {
    const IDX c = get_global_id(0);
    if (c >= nw * chunks) return;
    const IDX w = c / chunks, first = w * per_item + (c % chunks) * chunk;
    const IDX end = min(first + chunk, (w + 1) * per_item);
    uint n = 0;
    for (IDX i = first; i < end; ++i) n += parent[i] == (uint)i;
    counts[c] = n;
}

// Per batch item (one work-group each): the chunks' counts turned into the labels before each chunk (an
// exclusive scan), and the item's number of features into totals[w].
kernel void label_scan(global uint *counts, IDX chunks, global uint *totals, local uint *sums) {
    const IDX w = get_group_id(0);
    const uint t = get_local_id(0), threads = get_local_size(0);
    global uint *c = counts + w * chunks;
    const IDX per = (chunks + threads - 1) / threads;
    const IDX lo = min((IDX)t * per, chunks), hi = min(lo + per, chunks);
    uint sum = 0;
    for (IDX i = lo; i < hi; ++i) sum += c[i];
    sums[t] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t == 0) {
        uint run = 0;
        for (uint k = 0; k < threads; ++k) {
            const uint s = sums[k];
            sums[k] = run;
            run += s;
        }
        totals[w] = run;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint run = sums[t];
    for (IDX i = lo; i < hi; ++i) {
        const uint s = c[i];
        c[i] = run;
        run += s;
    }
}

// Each root's label: 1 + the roots before it in its item.
kernel void label_number(IDX per_item, IDX nw, global const uint *parent, global const uint *counts, IDX chunk,
                         IDX chunks, global uint *number) {
    const IDX c = get_global_id(0);
    if (c >= nw * chunks) return;
    const IDX w = c / chunks, first = w * per_item + (c % chunks) * chunk;
    const IDX end = min(first + chunk, (w + 1) * per_item);
    uint run = counts[c];
    for (IDX i = first; i < end; ++i) {
        if (parent[i] == (uint)i) number[i] = ++run;
    }
}

// The output: each element's label (0 for background), or for hole filling 1 where the input is set or the
// background is cut off from the outside.
kernel void label_write(global const T *x, IDX x0, IDX xsw, IDX xsz, IDX xsy, IDX xsx, global T *y, IDX y0,
                        IDX ysw, IDX ysz, IDX ysy, IDX ysx, IDX nw, IDX nz, IDX ny, IDX nx, global const uint *parent,
                        global const uint *number, int holes) {
    const IDX g = get_global_id(0);
    if (g >= nw * nz * ny * nx) return;
    const IDX cx = g % nx, cy = (g / nx) % ny, cz = (g / nx / ny) % nz, cw = g / nx / ny / nz;
    const uint p = parent[(uint)g + (uint)holes];
    T v;
    if (holes) {
        v = (p == NO_PARENT || p != 0) ? (T)1 : (T)0;
    } else {
        v = p == NO_PARENT ? (T)0 : (T)number[p];
    }
    y[y0 + cw * ysw + cz * ysz + cy * ysy + cx * ysx] = v;
}

// Small objects and holes (RemoveSmall, skimage's remove_small_objects / remove_small_holes): the labels `l` of the
// objects (of the input's non-zero elements, of its zero elements for holes, or the input itself when it is
// labelled) are counted into `counts` with atomics, then each element of a label counted fewer than `limit` times
// is removed (objects) or filled (holes). All arrays are walked as [nw, nz, ny, nx] with strides.

// For holes, the elements to label: 1 where the input is zero.
kernel void small_invert(global const T *x, IDX x0, IDX xsw, IDX xsz, IDX xsy, IDX xsx, global T *y, IDX nw, IDX nz,
                         IDX ny, IDX nx) {
    const IDX g = get_global_id(0);
    if (g >= nw * nz * ny * nx) return;
    const IDX cx = g % nx, cy = (g / nx) % ny, cz = (g / nx / ny) % nz, cw = g / nx / ny / nz;
    y[g] = x[x0 + cw * xsw + cz * xsz + cy * xsy + cx * xsx] == (T)0 ? (T)1 : (T)0;
}

// For labelled inputs, what skimage's bincount needs: found[0] the largest label (atomic maximum), found[1] bit 1
// a negative label, bit 2 a label that is not a whole number (or NaN), bit 4 a label above `most`.
kernel void small_check(global const T *x, IDX x0, IDX xsw, IDX xsz, IDX xsy, IDX xsx, IDX nw, IDX nz, IDX ny,
                        IDX nx, uint most, global uint *found) {
    const IDX g = get_global_id(0);
    if (g >= nw * nz * ny * nx) return;
    const IDX cx = g % nx, cy = (g / nx) % ny, cz = (g / nx / ny) % nz, cw = g / nx / ny / nz;
    const T v = x[x0 + cw * xsw + cz * xsz + cy * xsy + cx * xsx];
    uint flags = 0;
    if (v < (T)0) flags |= 1;
    if (!(v == floor(v))) flags |= 2;
    if (v > (T)most) flags |= 4;
    if (flags) {
        atomic_or((volatile global uint *)&found[1], flags);
    } else if (v > (T)0) {
        atomic_max((volatile global uint *)&found[0], (uint)v);
    }
}

// Every count to zero (the count buffer is reused between launches).
kernel void small_zero(global uint *counts, IDX n) {
    const IDX g = get_global_id(0);
    if (g < n) counts[g] = 0;
}

// The elements of each label; the background (0) is not counted.
kernel void small_count(global const T *l, IDX l0, IDX lsw, IDX lsz, IDX lsy, IDX lsx, IDX nw, IDX nz, IDX ny, IDX nx,
                        global uint *counts) {
    const IDX g = get_global_id(0);
    if (g >= nw * nz * ny * nx) return;
    const IDX cx = g % nx, cy = (g / nx) % ny, cz = (g / nx / ny) % nz, cw = g / nx / ny / nz;
    const uint label = (uint)l[l0 + cw * lsw + cz * lsz + cy * lsy + cx * lsx];
    if (label != 0) atomic_inc((volatile global uint *)&counts[label]);
}

// The output: objects — the input, 0 where its label has fewer than `limit` elements; holes — 1 where the input is
// non-zero or its zero region has fewer than `limit` elements, else 0.
kernel void small_keep(global const T *x, IDX x0, IDX xsw, IDX xsz, IDX xsy, IDX xsx, global const T *l, IDX l0,
                       IDX lsw, IDX lsz, IDX lsy, IDX lsx, global T *y, IDX y0, IDX ysw, IDX ysz, IDX ysy, IDX ysx,
                       IDX nw, IDX nz, IDX ny, IDX nx, global const uint *counts, ulong limit, int holes) {
    const IDX g = get_global_id(0);
    if (g >= nw * nz * ny * nx) return;
    const IDX cx = g % nx, cy = (g / nx) % ny, cz = (g / nx / ny) % nz, cw = g / nx / ny / nz;
    const T v = x[x0 + cw * xsw + cz * xsz + cy * xsy + cx * xsx];
    const uint label = (uint)l[l0 + cw * lsw + cz * lsz + cy * lsy + cx * lsx];
    // limit 1 (skimage's max_size = 0) removes nothing and reads no counts: the labels may be any values then.
    const bool small = limit > 1 && label != 0 && (ulong)counts[label] < limit;
    T out;
    if (holes) {
        out = (v != (T)0 || small) ? (T)1 : (T)0;
    } else {
        out = small ? (T)0 : v;
    }
    y[y0 + cw * ysw + cz * ysz + cy * ysy + cx * ysx] = out;
}

// ---------------------------------------------------------------------------------------------------------------
// scipy.ndimage.distance_transform_bf: each element's nearest zero element by brute force, one work-item per
// element over every element of the array — scipy's rule exactly: its squared Euclidean distance Σ((Δ·s)²) in
// axis order (`metric` 0), or the sum (1, taxicab) or largest (2, chessboard) of the |Δ| (no spacing), the
// first strictly nearer one walking down from the last element (scipy walks its list of border zeros, built
// backwards), so ties go to the highest position. No zero at all: `none_distance` and position 0, as scipy.
// `y` gets the distance (`want_indices` 0) or, at y + a·count, the position's coordinate along axis a.

kernel void distance_bf(global const T *x, IDX x0, IDX count, IDX nz, IDX ny, IDX nx, int ndim, int metric, T sz,
                        T sy, T sx, T none_distance, int want_indices, global T *y, IDX y0) {
    const IDX g = get_global_id(0);
    if (g >= count) return;
    const long gz = (long)(g / nx / ny), gy = (long)((g / nx) % ny), gx = (long)(g % nx);
    IDX at = 0;
    T best = none_distance;
    if (x[x0 + g] == (T)0) {
        at = g;
        best = (T)0;
    } else {
        int found = 0;
        for (IDX k = count; k-- > 0;) {
            if (x[x0 + k] != (T)0) continue;
            const long dz = (long)(k / nx / ny) - gz, dy = (long)((k / nx) % ny) - gy, dx = (long)(k % nx) - gx;
            const long az = dz < 0 ? -dz : dz, ay = dy < 0 ? -dy : dy, ax = dx < 0 ? -dx : dx;
            T d;
            if (metric == 0) {
                // scipy's order: the first axis first (the leading, absent axes add exact zeros).
                const T tz = (T)dz * sz, ty = (T)dy * sy, tx = (T)dx * sx;
                d = (T)0;
                if (ndim >= 3) d += tz * tz;
                if (ndim >= 2) d += ty * ty;
                d += tx * tx;
            } else if (metric == 1) {
                d = (T)(az + ay + ax);
            } else {
                d = (T)max(az, max(ay, ax));
            }
            if (!found || d < best) {
                best = d;
                at = k;
                found = 1;
            }
        }
        if (found && metric == 0) best = sqrt(best);
    }
    if (!want_indices) {
        y[y0 + g] = best;
        return;
    }
    const IDX coordinate[3] = {at / nx / ny, (at / nx) % ny, at % nx};
    for (int a = 0; a < ndim; ++a) y[y0 + (IDX)a * count + g] = (T)coordinate[3 - ndim + a];
}

// Skeletons (Skeletonize, skimage.morphology.skeletonize). The input (a strided [z, y, x] view) is loaded as 0/1
// into a contiguous array padded with zeros (`pz` = 1 pads z too: Lee's thinning; 0: Zhang's, 2-D), thinned, and
// the padded result's interior stored into the output's view.

// The padded 0/1 image: one work-item per padded element.
kernel void skel_load(global const T *x, IDX x0, IDX xsz, IDX xsy, IDX xsx, IDX nz, IDX ny, IDX nx, int pz,
                      global T *a) {
    const IDX qy = ny + 2, qx = nx + 2, qz = nz + 2 * (IDX)pz;
    const IDX g = get_global_id(0);
    if (g >= qz * qy * qx) return;
    const IDX px = g % qx, py = (g / qx) % qy, pzz = g / qx / qy;
    const bool inside = px >= 1 && px <= nx && py >= 1 && py <= ny && pzz >= (IDX)pz && pzz < nz + (IDX)pz;
    // skimage's astype(bool): non-zero (NaN included) is foreground.
    a[g] = inside && x[x0 + (pzz - pz) * xsz + (py - 1) * xsy + (px - 1) * xsx] != (T)0 ? (T)1 : (T)0;
}

// The padded result's interior into the output's view.
kernel void skel_store(global const T *a, int pz, global T *y, IDX y0, IDX ysz, IDX ysy, IDX ysx, IDX nz, IDX ny,
                       IDX nx) {
    const IDX g = get_global_id(0);
    if (g >= nz * ny * nx) return;
    const IDX cx = g % nx, cy = (g / nx) % ny, cz = g / nx / ny;
    y[y0 + cz * ysz + cy * ysy + cx * ysx] = a[((cz + pz) * (ny + 2) + cy + 1) * (nx + 2) + cx + 1];
}

// Every flag to zero.
kernel void skel_clear(global T *flags, IDX n) {
    const IDX g = get_global_id(0);
    if (g < n) flags[g] = (T)0;
}

// scikit-image's table of Zhang and Suen's thinning: for each code of the 8 neighbours (1 NW, 2 N, 4 NE, 8 E, 16 SE,
// 32 S, 64 SW, 128 W), 1: deleted in the first sub-iteration, 2: in the second, 3: in both, 0: kept. It is
// scikit-image's own table (`_fast_skeletonize`), not the one Zhang and Suen's conditions give (25 codes differ):
// the results must be scikit-image's.
constant uchar zhang_table[256] = {
    0, 0, 0, 1, 0, 0, 1, 3, 0, 0, 3, 1, 1, 0, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2, 0, 3, 0, 3, 3,
    0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 3, 0, 2, 2,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 3, 0, 2, 0,
    0, 0, 3, 1, 0, 0, 1, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
    3, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    2, 3, 1, 3, 0, 0, 1, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    2, 3, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 0, 1, 0, 0, 0, 0, 2, 2, 0, 0, 2, 0, 0, 0};

// One sub-iteration of Zhang and Suen's thinning over a padded 2-D image (ny + 2, nx + 2): `b` is `a` less the
// points the table deletes in this sub-iteration (`first`: the first), every point decided from `a` alone — the
// sub-iteration is parallel by design. A deletion sets flags[slot].
kernel void skel_zhang(global const T *a, global T *b, IDX ny, IDX nx, int first, global T *flags, IDX slot) {
    const IDX g = get_global_id(0);
    if (g >= ny * nx) return;
    const IDX w = nx + 2;
    const IDX i = (g / nx + 1) * w + g % nx + 1;
    if (a[i] == (T)0) {
        b[i] = (T)0;
        return;
    }
    const uint code = (a[i - w - 1] != (T)0) | (a[i - w] != (T)0) << 1 | (a[i - w + 1] != (T)0) << 2 |
                      (a[i + 1] != (T)0) << 3 | (a[i + w + 1] != (T)0) << 4 | (a[i + w] != (T)0) << 5 |
                      (a[i + w - 1] != (T)0) << 6 | (a[i - 1] != (T)0) << 7;
    const uchar kind = zhang_table[code];
    const bool deleted = kind == 3 || (kind == 1 && first) || (kind == 2 && !first);
    b[i] = deleted ? (T)0 : (T)1;
    if (deleted) flags[slot] = (T)1;
}

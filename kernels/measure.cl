// Per-label measurements (scipy.ndimage's sum_labels, mean, variance, minimum/maximum and their positions,
// center_of_mass, find_objects). Prepended by common.cl; T is float or double (the image and the labels), IDX the
// index type. Every accumulation is in double, as scipy's bincount with weights is, whatever T is.
//
// The image and the labels are contiguous, of up to three axes (nz, ny, nx). Each work-item walks `chunk`
// consecutive elements and sums privately while the label stays the same — labels come in runs along rows —, so
// a global atomic is paid per run, not per element.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable

// The per-row accumulators in `acc` (doubles, ACC_STRIDE per row): the count, the sum, the sum of squared
// deviations from the mean (second pass), the three value-weighted coordinate sums (z, y, x); then, for the
// region's shape (second pass, every element counting 1, coordinates from the box's first corner): the sums of
// z, y, x and of zz, yy, xx, zy, zx, yx.
#define ACC_COUNT 0
#define ACC_SUM 1
#define ACC_SQUARES 2
#define ACC_COM 3
#define ACC_SHAPE 6
#define ACC_STRIDE 15
// The per-row ulong slots in `keys` (KEY_STRIDE per row): the ordered minimum and maximum, the first positions of
// each (C order).
#define KEY_MIN 0
#define KEY_MAX 1
#define KEY_MINPOS 2
#define KEY_MAXPOS 3
#define KEY_STRIDE 4
// The per-row bounding box in `box` (ulongs, 6 per row): the lowest and highest index along z, y and x.
#define BOX_STRIDE 6

// The largest label a label image may hold: one row of accumulators each up to it.
#define MOST_LABEL 268435456u

// Bits of `flags`, what to accumulate. A program built with -DMEASURE_FLAGS=F has them as a constant: the
// per-element work of what is not asked for is compiled out (on PoCL's CPUs, a sum alone then costs about half).
#define WANT_SUMS 1u
#define WANT_COM 2u
#define WANT_EXTREMA 4u
#define WANT_BOX 8u
#define WANT_SQUARES 16u
#define WANT_POSITIONS 32u
#define WANT_SHAPE 64u

// NV_RED (NVIDIA GPUs of compute capability 6.0 and later, set by the host): the hardware's own reductions in
// the L2 cache. A CAS loop retries once per competing writer, and the 26 runs of a label that end at the same time
// in neighbouring rows made the first pass of a 10⁵-label 8192² image take 37 ms on an H200.
#ifdef NV_RED
inline void add_double(volatile global double *p, double v) {
    asm volatile("red.global.add.f64 [%0], %1;" : : "l"(p), "d"(v) : "memory");
}

inline void min_ulong(volatile global ulong *p, ulong v) {
    asm volatile("red.global.min.u64 [%0], %1;" : : "l"(p), "l"(v) : "memory");
}

inline void max_ulong(volatile global ulong *p, ulong v) {
    asm volatile("red.global.max.u64 [%0], %1;" : : "l"(p), "l"(v) : "memory");
}
#else
inline void add_double(volatile global double *p, double v) {
    union { ulong u; double d; } old, next;
    old.d = *p;
    for (;;) {
        next.d = old.d + v;
        const ulong seen = atom_cmpxchg((volatile global ulong *)p, old.u, next.u);
        if (seen == old.u) return;
        old.u = seen;
    }
}

inline void min_ulong(volatile global ulong *p, ulong v) {
    ulong old = *p;
    while (v < old) {
        const ulong seen = atom_cmpxchg(p, old, v);
        if (seen == old) return;
        old = seen;
    }
}

inline void max_ulong(volatile global ulong *p, ulong v) {
    ulong old = *p;
    while (v > old) {
        const ulong seen = atom_cmpxchg(p, old, v);
        if (seen == old) return;
        old = seen;
    }
}
#endif

// A double's bits ordered as the values are (every NaN made the one positive NaN, above +inf).
inline ulong ordered(double v) {
    const ulong u = isnan(v) ? 0x7ff8000000000000ul : as_ulong(v);
    return (u >> 63) ? ~u : (u | 0x8000000000000000ul);
}

// The row of label value `l` (-1: not measured). `mode` 0: every whole label from 1 (`rows` unused, the row is the
// label); 1: labels > 0 as one row; 2: the rows `rows[l]` of the whole labels up to `nrows_lookup` (-1 where the
// label is not asked for).
inline long row_of(T l, uint mode, global const int *rows, uint lookup) {
    if (mode == 1) return l > (T)0 ? 0 : -1;
    if (!(l >= (T)0) || l != floor(l) || l >= (T)lookup) return -1;
    const uint k = (uint)l;
    if (mode == 0) return k == 0 ? -1 : (long)k;
    return rows[k];
}

// found[0]: the largest whole label (atomic maximum); found[1]: how many labels are not whole numbers from 0 to
// MOST_LABEL − 1 (NaN, negative, fractional, too large); found[2]: the lowest index of such a label.
// Each work-item keeps its own answers and pays one atomic each at the end: an atomic per element on one address
// serialised a 512³ scan on an H200.
kernel void measure_scan(global const T *labels, IDX l0, IDX n, global uint *found) {
    uint largest = 0, bad = 0, first_bad = ~0u;
    for (IDX i = get_global_id(0); i < n; i += get_global_size(0)) {
        const T l = labels[l0 + i];
        if (l >= (T)0 && l == floor(l) && l < (T)MOST_LABEL) {
            if (l > (T)0) largest = max(largest, (uint)l);
        } else {
            bad++;
            first_bad = min(first_bad, (uint)i);
        }
    }
    if (largest > 0) atomic_max(&found[0], largest);
    if (bad > 0) {
        atomic_add(&found[1], bad);
        atomic_min(&found[2], first_bad);
    }
}

// Clears the accumulators: sums 0, minimum keys high, maximum keys low, positions past the end, boxes empty.
kernel void measure_clear(global double *acc, global ulong *keys, global ulong *box, IDX rows) {
    const IDX r = get_global_id(0);
    if (r >= rows) return;
    for (uint k = 0; k < ACC_STRIDE; k++) acc[r * ACC_STRIDE + k] = 0.0;
    keys[r * KEY_STRIDE + KEY_MIN] = ~0ul;
    keys[r * KEY_STRIDE + KEY_MAX] = 0ul;
    keys[r * KEY_STRIDE + KEY_MINPOS] = ~0ul;
    keys[r * KEY_STRIDE + KEY_MAXPOS] = ~0ul;
    for (uint k = 0; k < 3; k++) {
        box[r * BOX_STRIDE + k] = ~0ul;
        box[r * BOX_STRIDE + 3 + k] = 0ul;
    }
}

// The end of the run that starts at element i (index z, y, x = cx): the first element after it whose label differs,
// or the row's end, or `stop` — a run stays in one row, so its z and y are fixed and its x consecutive. The scan
// compares the labels alone, so the per-element work of what is measured runs over whole runs.
inline IDX run_end(global const T *labels, IDX l0, IDX i, IDX stop, uint cx, uint nx) {
    const T l = labels[l0 + i];
    const IDX end = min(stop, i + (IDX)(nx - cx));
    IDX j = i + 1;
    while (j < end && labels[l0 + j] == l) j++;
    return j;
}

// Moves the index (z, y, x) on by `len` elements of one row (to the next row's start when it reaches the end).
inline void step_run(uint *cz, uint *cy, uint *cx, uint len, uint ny, uint nx) {
    *cx += len;
    if (*cx == nx) {
        *cx = 0;
        if (++*cy == ny) {
            *cy = 0;
            ++*cz;
        }
    }
}

// Σ x over x = a … a + len − 1, and Σ x², exactly (whole numbers below 2⁵³ in double).
inline double sum_x(double a, double len) { return len * a + len * (len - 1.0) * 0.5; }
inline double sum_xx(double a, double len) {
    const double b = a + len - 1.0;
    return (b * (b + 1.0) * (2.0 * b + 1.0) - (a - 1.0) * a * (2.0 * a - 1.0)) / 6.0;
}

// What one stretch of a label adds to its row (`count` > 0).
inline void flush_run(long row, uint flags, double count, double sum, double cz, double cy, double cx, ulong kmin,
                      ulong kmax, ulong lz, ulong ly, ulong lx, ulong hz, ulong hy, ulong hx, global double *acc,
                      global ulong *keys, global ulong *box) {
    global double *a = acc + row * ACC_STRIDE;
    if (flags & WANT_SUMS) {
        add_double(a + ACC_COUNT, count);
        add_double(a + ACC_SUM, sum);
    }
    if (flags & WANT_COM) {
        add_double(a + ACC_COM, cz);
        add_double(a + ACC_COM + 1, cy);
        add_double(a + ACC_COM + 2, cx);
    }
    if (flags & WANT_EXTREMA) {
        min_ulong(keys + row * KEY_STRIDE + KEY_MIN, kmin);
        max_ulong(keys + row * KEY_STRIDE + KEY_MAX, kmax);
    }
    if (flags & WANT_BOX) {
        global ulong *b = box + row * BOX_STRIDE;
        min_ulong(b, lz);
        min_ulong(b + 1, ly);
        min_ulong(b + 2, lx);
        max_ulong(b + 3, hz);
        max_ulong(b + 4, hy);
        max_ulong(b + 5, hx);
    }
}

// The first pass: counts, sums, coordinate-weighted sums, extrema (NaN ignored by the minimum — scipy's sorted
// order puts NaN last — and kept by the maximum), bounding boxes. `has_image` 0: every value is 1 (the labels'
// own measurements: sizes, unweighted centroids, boxes). The work-item sums privately while the label stays the
// same (across rows too) and flushes when it changes.
kernel void measure_sums(global const T *x, IDX x0, global const T *labels, IDX l0, IDX n, IDX chunk, uint mode,
                         global const int *rows, uint lookup, uint flags, int has_image, global double *acc,
                         global ulong *keys, global ulong *box, uint ny, uint nx) {
#ifdef MEASURE_FLAGS
    flags = MEASURE_FLAGS;
#endif
    const IDX start = (IDX)get_global_id(0) * chunk;
    if (start >= n) return;
    const IDX stop = min(n, start + chunk);
    uint cx = (uint)(start % nx), cy = (uint)((start / nx) % ny), cz = (uint)(start / nx / ny);
    long row = -1;
    double count = 0, sum = 0, wz = 0, wy = 0, wx = 0;
    ulong kmin = ~0ul, kmax = 0;
    uint lz = ~0u, ly = ~0u, lx = ~0u, hz = 0, hy = 0, hx = 0;
    for (IDX i = start; i < stop;) {
        const IDX j = run_end(labels, l0, i, stop, cx, nx);
        const uint len = (uint)(j - i);
        const long r = row_of(labels[l0 + i], mode, rows, lookup);
        if (r != row) {
            if (row >= 0 && count > 0)
                flush_run(row, flags, count, sum, wz, wy, wx, kmin, kmax, lz, ly, lx, hz, hy, hx, acc, keys, box);
            row = r;
            count = sum = wz = wy = wx = 0;
            kmin = ~0ul;
            kmax = 0;
            lz = ly = lx = ~0u;
            hz = hy = hx = 0;
        }
        if (r >= 0) {
            count += (double)len;
            double run_sum = 0, run_x = 0;
            if (has_image) {
                for (IDX e = i; e < j; e++) {
                    const double v = (double)x[x0 + e];
                    run_sum += v;
                    if (flags & WANT_COM) run_x += v * (double)(cx + (uint)(e - i));
                    if (flags & WANT_EXTREMA) {
                        const ulong k = ordered(v);
                        if (!isnan(v)) kmin = min(kmin, k);
                        kmax = max(kmax, k);
                    }
                }
            } else {
                run_sum = (double)len;
                run_x = sum_x((double)cx, (double)len);
                const ulong k = ordered(1.0);
                kmin = min(kmin, k);
                kmax = max(kmax, k);
            }
            sum += run_sum;
            if (flags & WANT_COM) {
                wz += run_sum * (double)cz;
                wy += run_sum * (double)cy;
                wx += run_x;
            }
            if (flags & WANT_BOX) {
                lz = min(lz, cz);
                ly = min(ly, cy);
                lx = min(lx, cx);
                hz = max(hz, cz);
                hy = max(hy, cy);
                hx = max(hx, cx + len - 1);
            }
        }
        step_run(&cz, &cy, &cx, len, ny, nx);
        i = j;
    }
    if (row >= 0 && count > 0)
        flush_run(row, flags, count, sum, wz, wy, wx, kmin, kmax, lz, ly, lx, hz, hy, hx, acc, keys, box);
}

// The second pass, once the sums, extrema and boxes are known: the squared deviations from each row's mean
// (scipy's centred variance), the first positions (C order) of each row's minimum and maximum, and the region's
// unweighted coordinate sums and products from its box's first corner (skimage's moments of the region's image:
// per run in closed form, exact whole numbers).
kernel void measure_second(global const T *x, IDX x0, global const T *labels, IDX l0, IDX n, IDX chunk, uint mode,
                           global const int *rows, uint lookup, uint flags, int has_image, global double *acc,
                           global ulong *keys, global ulong *box, uint ny, uint nx) {
#ifdef MEASURE_FLAGS
    flags = MEASURE_FLAGS;
#endif
    const IDX start = (IDX)get_global_id(0) * chunk;
    if (start >= n) return;
    const IDX stop = min(n, start + chunk);
    uint cx = (uint)(start % nx), cy = (uint)((start / nx) % ny), cz = (uint)(start / nx / ny);
    long row = -1;
    double mean = 0, squares = 0;
    double sz = 0, sy = 0, sx = 0, szz = 0, syy = 0, sxx = 0, szy = 0, szx = 0, syx = 0;
    double bz = 0, by = 0, bx = 0;
    ulong kmin = 0, kmax = 0, pmin = ~0ul, pmax = ~0ul;
    for (IDX i = start; i <= stop;) {
        const IDX j = i < stop ? run_end(labels, l0, i, stop, cx, nx) : stop;
        const long r = i < stop ? row_of(labels[l0 + i], mode, rows, lookup) : -2;
        if (r != row) {
            if (row >= 0) {
                global double *a = acc + row * ACC_STRIDE;
                if (flags & WANT_SQUARES) add_double(a + ACC_SQUARES, squares);
                if (flags & WANT_POSITIONS) {
                    if (pmin != ~0ul) min_ulong(keys + row * KEY_STRIDE + KEY_MINPOS, pmin);
                    if (pmax != ~0ul) min_ulong(keys + row * KEY_STRIDE + KEY_MAXPOS, pmax);
                }
                if (flags & WANT_SHAPE) {
                    add_double(a + ACC_SHAPE, sz);
                    add_double(a + ACC_SHAPE + 1, sy);
                    add_double(a + ACC_SHAPE + 2, sx);
                    add_double(a + ACC_SHAPE + 3, szz);
                    add_double(a + ACC_SHAPE + 4, syy);
                    add_double(a + ACC_SHAPE + 5, sxx);
                    add_double(a + ACC_SHAPE + 6, szy);
                    add_double(a + ACC_SHAPE + 7, szx);
                    add_double(a + ACC_SHAPE + 8, syx);
                }
            }
            if (i == stop) break;
            row = r;
            squares = sz = sy = sx = szz = syy = sxx = szy = szx = syx = 0;
            pmin = pmax = ~0ul;
            if (row >= 0) {
                const global double *a = acc + row * ACC_STRIDE;
                mean = a[ACC_SUM] / a[ACC_COUNT];
                kmin = keys[row * KEY_STRIDE + KEY_MIN];
                kmax = keys[row * KEY_STRIDE + KEY_MAX];
                bz = (double)box[row * BOX_STRIDE];
                by = (double)box[row * BOX_STRIDE + 1];
                bx = (double)box[row * BOX_STRIDE + 2];
            }
        }
        const uint len = (uint)(j - i);
        if (row >= 0) {
            if (flags & (WANT_SQUARES | WANT_POSITIONS)) {
                for (IDX e = i; e < j; e++) {
                    const double v = has_image ? (double)x[x0 + e] : 1.0;
                    if (flags & WANT_SQUARES) {
                        const double d = v - mean;
                        squares += d * d;
                    }
                    if (flags & WANT_POSITIONS) {
                        const ulong k = ordered(v);
                        if (k == kmin && pmin == ~0ul) pmin = (ulong)e;
                        if (k == kmax && pmax == ~0ul) pmax = (ulong)e;
                    }
                }
            }
            if (flags & WANT_SHAPE) {
                const double z = (double)cz - bz, y = (double)cy - by, w = (double)cx - bx, m = (double)len;
                const double xs = sum_x(w, m), xxs = sum_xx(w, m);
                sz += m * z;
                sy += m * y;
                sx += xs;
                szz += m * z * z;
                syy += m * y * y;
                sxx += xxs;
                szy += m * z * y;
                szx += z * xs;
                syx += y * xs;
            }
        }
        step_run(&cz, &cy, &cx, len, ny, nx);
        i = j;
    }
}

// Gathers each row's accumulators the table is made of into `packed` (`count` per row, in the order of `slots`),
// so that only they cross to the host. A slot numbers the ACC_STRIDE sums, then the KEY_STRIDE keys, the BOX_STRIDE
// box bounds and the `moments_per_row` moments; values move as bits.
kernel void measure_pack(global const ulong *acc, global const ulong *keys, global const ulong *box,
                         global const ulong *moments, uint moments_per_row, global const uint *slots, uint count,
                         IDX rows, global ulong *packed) {
    const IDX r = get_global_id(0);
    if (r >= rows) return;
    for (uint j = 0; j < count; j++) {
        const uint s = slots[j];
        ulong v;
        if (s < ACC_STRIDE) v = acc[r * ACC_STRIDE + s];
        else if (s < ACC_STRIDE + KEY_STRIDE) v = keys[r * KEY_STRIDE + s - ACC_STRIDE];
        else if (s < ACC_STRIDE + KEY_STRIDE + BOX_STRIDE) v = box[r * BOX_STRIDE + s - ACC_STRIDE - KEY_STRIDE];
        else v = moments[r * moments_per_row + s - ACC_STRIDE - KEY_STRIDE - BOX_STRIDE];
        packed[r * count + j] = v;
    }
}

#ifdef MOMENT_AXES
// skimage's regionprops moments: per row, the sums over the region of z^a·y^b·x^c (a, b, c from 0 to 3, over the
// data's last MOMENT_AXES axes), coordinates from the region's box corner (skimage's moments of the region's
// image), and with `weighted` the same sums weighted by the image's values (its moments_weighted). `moments` holds
// per row MOMENT_COUNT unweighted sums, then MOMENT_COUNT weighted ones (flat index a·16 + b·4 + c over the axes
// there are). A third pass, once the boxes are known. Per run (z and y fixed) the four sums Σ x^c (and Σ v·x^c)
// are taken first, so the per-element work is four terms, not MOMENT_COUNT.
#if MOMENT_AXES == 1
#define MOMENT_COUNT 4
#elif MOMENT_AXES == 2
#define MOMENT_COUNT 16
#else
#define MOMENT_COUNT 64
#endif

kernel void measure_moments(global const T *x, IDX x0, global const T *labels, IDX l0, IDX n, IDX chunk, uint mode,
                            global const int *rows, uint lookup, int weighted, global const ulong *box,
                            global double *moments, uint ny, uint nx) {
    const IDX start = (IDX)get_global_id(0) * chunk;
    if (start >= n) return;
    const IDX stop = min(n, start + chunk);
    uint cx = (uint)(start % nx), cy = (uint)((start / nx) % ny), cz = (uint)(start / nx / ny);
    long row = -1;
    const global ulong *corner = box;
    double plain[MOMENT_COUNT], heavy[MOMENT_COUNT];
    for (int k = 0; k < MOMENT_COUNT; k++) plain[k] = heavy[k] = 0;
    for (IDX i = start; i <= stop;) {
        const IDX j = i < stop ? run_end(labels, l0, i, stop, cx, nx) : stop;
        const long r = i < stop ? row_of(labels[l0 + i], mode, rows, lookup) : -2;
        if (r != row) {
            if (row >= 0) {
                global double *m = moments + row * 2 * MOMENT_COUNT;
                for (int k = 0; k < MOMENT_COUNT; k++) {
                    add_double(m + k, plain[k]);
                    if (weighted) add_double(m + MOMENT_COUNT + k, heavy[k]);
                    plain[k] = heavy[k] = 0;
                }
            }
            if (i == stop) break;
            row = r;
            if (row >= 0) corner = box + row * BOX_STRIDE;
        }
        const uint len = (uint)(j - i);
        if (row >= 0) {
            // Σ x^c and Σ v·x^c over the run, x from the box corner.
            double sx[4] = {0, 0, 0, 0}, svx[4] = {0, 0, 0, 0};
            const double w0 = (double)cx - (double)corner[2];
            for (uint e = 0; e < len; e++) {
                const double w = w0 + (double)e;
                const double px[4] = {1.0, w, w * w, w * w * w};
                const double v = weighted ? (double)x[x0 + i + e] : 0.0;
                for (int c = 0; c < 4; c++) {
                    sx[c] += px[c];
                    svx[c] += v * px[c];
                }
            }
#if MOMENT_AXES >= 2
            const double y = (double)cy - (double)corner[1];
            const double py[4] = {1.0, y, y * y, y * y * y};
#endif
#if MOMENT_AXES == 3
            const double z = (double)cz - (double)corner[0];
            const double pz[4] = {1.0, z, z * z, z * z * z};
#endif
            for (int k = 0; k < MOMENT_COUNT; k++) {
#if MOMENT_AXES == 1
                const double outer = 1.0;
#elif MOMENT_AXES == 2
                const double outer = py[k >> 2];
#else
                const double outer = pz[k >> 4] * py[(k >> 2) & 3];
#endif
                plain[k] += outer * sx[k & 3];
                if (weighted) heavy[k] += outer * svx[k & 3];
            }
        }
        step_run(&cz, &cy, &cx, len, ny, nx);
        i = j;
    }
}

// Zeroes `count` doubles.
kernel void measure_zero(global double *a, IDX count) {
    const IDX i = get_global_id(0);
    if (i < count) a[i] = 0.0;
}
#endif

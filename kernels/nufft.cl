// The non-uniform FFT (the nufft family: Nufft). The host builds the program per plan with
//   DIM          the transform's axes (1 to 3); the arrays are seen as 3-D with the leading 3 − DIM axes of size 1
//   W            the kernel's taps per axis (fine-grid cells)
//   MARGIN       cells added on each side of a bin's tile, so that a tap rounded across a cell edge stays inside
//   POINT_MAJOR  1 where spreading groups have one work-item (CPUs): it adds each point's taps directly
//   LOCAL_TILE   1 where the spreading groups keep their tile in local memory (GPUs, when it fits)
//   DEGREE       the degree of the taps' Chebyshev series in nufft_series (generated before this file), or 0
//   COORD_STRIDE values per point and axis in coords: 2, or 4 with BART's kernel (below)
//   BART_TABLE   1 where the taps are BART's Kaiser–Bessel table (bart_table, generated before this file)
// Points arrive sorted by bin. Along the d-th transformed axis a point at fine-grid position x (wrapped into
// [0, n)) is held as its first tap's cell j0 = ⌈x − W/2⌉ and the offset u = j0 − x ∈ [−W/2, 1 − W/2), both
// computed in float64 on the host: coords[(p * DIM + d) * 2] = j0 (exact as R), [... + 1] = u. The taps then
// depend on u alone, which float32 holds to 1e-7 of a cell however large the grid. order[p] is a sorted point's
// index in the caller's arrays. With BART's kernel two more values follow the pair: the first and last tap that
// BART's grid keeps (it drops taps past its edges instead of wrapping them).

#ifndef COORD_STRIDE
#define COORD_STRIDE 2
#endif
#ifndef BART_TABLE
#define BART_TABLE 0
#endif

#define TAPS0 (DIM == 3 ? W : 1)
#define TAPS1 (DIM >= 2 ? W : 1)
#define TAPS2 W

// The kernel's taps of the point whose coordinate pair starts at c: w[t] = φ(j0 + t − x) = φ(u + t) for t < W,
// with j0 returned; φ(z) = exp(β(√(1 − z²) − 1)) with z the distance over W/2 (the exponential of semicircle).
// With DEGREE > 0 the host generated nufft_series[k][t], Chebyshev series of the taps in v = 2(u + W/2) − 1,
// summed by Clenshaw's recurrence (no exp, no sqrt; vectorises over t).
inline int nufft_taps(global const R* c, const R beta, R* w) {
    const R u = c[1];
#if BART_TABLE
    // BART's intlookup: the distance over the half-width at index ⌊x·99⌋ of the table, linear between entries;
    // 0 at and past the half-width, and for the taps BART's grid drops.
    const int lo = (int)c[2], hi = (int)c[3];
    for (int t = 0; t < W; t++) {
        const R x = fabs(u + (R)t) / (R)BART_HALF_WIDTH;
        R v = (R)0;
        if (t >= lo && t <= hi && x < (R)1) {
            const R s = x * (R)(BART_INTERVALS - 1);
            const int i = (int)s;
            const R f = s - (R)i;
            v = ((R)1 - f) * bart_table[i] + f * bart_table[i + 1];
        }
        w[t] = v;
    }
#elif DEGREE > 0
    const R v = (R)2 * (u + (R)W * (R)0.5) - (R)1;
    R b1[W], b2[W];
    for (int t = 0; t < W; t++) b1[t] = b2[t] = (R)0;
    for (int k = DEGREE; k >= 1; k--) {
        for (int t = 0; t < W; t++) {
            const R b0 = (R)2 * v * b1[t] - b2[t] + nufft_series[k][t];
            b2[t] = b1[t];
            b1[t] = b0;
        }
    }
    for (int t = 0; t < W; t++) w[t] = v * b1[t] - b2[t] + nufft_series[0][t];
#else
    const R inv_half = (R)2 / (R)W;
    for (int t = 0; t < W; t++) {
        const R z = (u + (R)t) * inv_half;
        const R s = (R)1 - z * z;
        w[t] = s >= (R)0 ? exp(beta * (sqrt(s) - (R)1)) : (R)0;
    }
#endif
    return (int)c[0];
}

// j in [−n, 2n) wrapped into [0, n).
inline uint nufft_wrap(const int j, const uint n) {
    return (uint)(j < 0 ? j + (int)n : (j >= (int)n ? j - (int)n : j));
}

// The image index of fine-grid index j along an axis of n fine cells and `len` image cells (centred: image index
// i holds frequency i − ⌊len/2⌋, and frequency r sits at fine index r mod n), or −1 outside the image.
inline int nufft_image_index(const uint j, const uint n, const uint len) {
    const uint below = len / 2;
    if (j < len - below) return (int)(j + below);
    if (j >= n - below) return (int)(j + below) - (int)n;
    return -1;
}

// fine[b, j] = image[b, i(j)] · deconv(i) where fine index j holds an image frequency, else 0 (type 2's first
// step: divide by the kernel's transform, zero-pad, in one pass over the fine grid). deconv holds the per-axis
// factors of the three axes one after the other (len0 + len1 + len2 values; the scale is in axis 0's).
kernel void nufft_pad(global const T* image, global const R* deconv, global T* fine, uint batch, uint n0, uint n1,
                      uint n2, uint len0, uint len1, uint len2) {
    const ulong fine_size = (ulong)n0 * n1 * n2, image_size = (ulong)len0 * len1 * len2;
    for (ulong g = get_global_id(0); g < batch * fine_size; g += get_global_size(0)) {
        const ulong b = g / fine_size, j = g % fine_size;
        const uint j2 = (uint)(j % n2), j1 = (uint)((j / n2) % n1), j0 = (uint)(j / ((ulong)n2 * n1));
        const int i0 = nufft_image_index(j0, n0, len0), i1 = nufft_image_index(j1, n1, len1),
                  i2 = nufft_image_index(j2, n2, len2);
        T v = ZERO;
        if (i0 >= 0 && i1 >= 0 && i2 >= 0) {
            const R f = deconv[i0] * deconv[len0 + i1] * deconv[len0 + len1 + i2];
            v = image[b * image_size + ((ulong)i0 * len1 + i1) * len2 + i2] * f;
        }
        fine[g] = v;
    }
}

// image[b, i] = fine[b, j(i)] · deconv(i): type 1's last step, the transpose of nufft_pad.
kernel void nufft_crop(global const T* fine, global const R* deconv, global T* image, uint batch, uint n0, uint n1,
                       uint n2, uint len0, uint len1, uint len2) {
    const ulong fine_size = (ulong)n0 * n1 * n2, image_size = (ulong)len0 * len1 * len2;
    for (ulong g = get_global_id(0); g < batch * image_size; g += get_global_size(0)) {
        const ulong b = g / image_size, i = g % image_size;
        const uint i2 = (uint)(i % len2), i1 = (uint)((i / len2) % len1), i0 = (uint)(i / ((ulong)len2 * len1));
        const uint j0 = (i0 + n0 - len0 / 2) % n0, j1 = (i1 + n1 - len1 / 2) % n1, j2 = (i2 + n2 - len2 / 2) % n2;
        const R f = deconv[i0] * deconv[len0 + i1] * deconv[len0 + len1 + i2];
        image[g] = fine[b * fine_size + ((ulong)j0 * n1 + j1) * n2 + j2] * f;
    }
}

// Type 2's last step: out[b, order[p]] = Σ_taps fine[b, j] · φ(j − x_p), one work-item per sorted point, its
// taps computed once for every batch entry.
kernel void nufft_interp(global const T* restrict fine, global const R* restrict coords,
                         global const uint* restrict order, global T* restrict out,
                         uint points, uint batch, uint n0, uint n1, uint n2, R beta) {
    const ulong fine_size = (ulong)n0 * n1 * n2;
    for (uint p = get_global_id(0); p < points; p += get_global_size(0)) {
        R w0[TAPS0], w1[TAPS1], w2[TAPS2];
        uint x0[TAPS0], x1[TAPS1], x2[TAPS2];
        int j0 = 0, j1 = 0;
#if DIM == 3
        j0 = nufft_taps(coords + p * 3 * COORD_STRIDE, beta, w0);
#else
        w0[0] = (R)1;
#endif
#if DIM >= 2
        j1 = nufft_taps(coords + (p * DIM + DIM - 2) * COORD_STRIDE, beta, w1);
#else
        w1[0] = (R)1;
#endif
        const int j2 = nufft_taps(coords + (p * DIM + DIM - 1) * COORD_STRIDE, beta, w2);
        for (int t = 0; t < TAPS0; t++) x0[t] = nufft_wrap(j0 + t, n0);
        for (int t = 0; t < TAPS1; t++) x1[t] = nufft_wrap(j1 + t, n1);
        for (int t = 0; t < TAPS2; t++) x2[t] = nufft_wrap(j2 + t, n2);
        for (uint b = 0; b < batch; b++) {
            global const T* grid = fine + b * fine_size;
            T sum = ZERO;
            for (int t0 = 0; t0 < TAPS0; t0++) {
                for (int t1 = 0; t1 < TAPS1; t1++) {
                    global const T* line = grid + ((ulong)x0[t0] * n1 + x1[t1]) * n2;
                    T acc = ZERO;
                    for (int t2 = 0; t2 < TAPS2; t2++) acc += line[x2[t2]] * w2[t2];
                    sum += acc * (w0[t0] * w1[t1]);
                }
            }
            out[(ulong)b * points + order[p]] = sum;
        }
    }
}

#if IS_DOUBLE
typedef double8 R8;
#else
typedef float8 R8;
#endif
// Whole groups of four of the last axis's taps.
#define QUADS (TAPS2 / 4)

#if LOCAL_TILE
#define TILE_SPACE local
#else
#define TILE_SPACE global
#endif

// Points a spread work-group takes into local memory at a time.
#define CHUNK 32

// Type 1's first step, without atomics: one work-group per (bin, batch entry) spreads the bin's points into the
// bin's own tile (the bin's cells and the W/2 + MARGIN cells around it, tile0 × tile1 × tile2), each work-item
// owning whole lines along the last axis, so every tile cell is written by one work-item in point order (the
// same bits every run). nufft_assemble adds the tiles into the fine grid. The taps of a chunk of points are
// computed once into local memory.
kernel void nufft_spread(global const T* restrict in, global const R* restrict coords,
                         global const uint* restrict order, global const uint* restrict bin_start,
                         global T* restrict tiles, uint points, uint bins0, uint bins1,
                         uint bins2, uint bin0, uint bin1, uint bin2, uint tile0, uint tile1, uint tile2, R beta,
                         local R* taps, local int* offsets, local T* values, local T* shared) {
    const uint bin = get_group_id(0), b = get_group_id(1);
    const uint lid = get_local_id(0), lsize = get_local_size(0);
    const uint bins = bins0 * bins1 * bins2;
    const uint c2 = bin % bins2, c1 = (bin / bins2) % bins1, c0 = bin / (bins2 * bins1);
    // A tile's first cell along each transformed axis: W/2 (rounded down) and the margin before the bin.
    const int lead = W / 2 + MARGIN;
    const int o0 = DIM == 3 ? (int)(c0 * bin0) - lead : 0;
    const int o1 = DIM >= 2 ? (int)(c1 * bin1) - lead : 0;
    const int o2 = (int)(c2 * bin2) - lead;
    const uint lines = tile0 * tile1;
    global T* tile_out = tiles + ((ulong)b * bins + bin) * lines * tile2;
#if LOCAL_TILE
    // The tile in local memory while the points are added (GPUs: their adds stay on the chip), written out once.
    local T* tile = shared;
#else
    global T* tile = tile_out;
#endif
    for (uint line = lid; line < lines; line += lsize)
        for (uint c = 0; c < tile2; c++) tile[line * tile2 + c] = ZERO;
    const uint start = bin_start[bin], end = bin_start[bin + 1];
#if POINT_MAJOR
    // One work-item per group (CPUs): it owns the whole tile, so it adds each point's taps directly, in order.
    for (uint p = start; p < end; p++) {
        R w0[TAPS0], w1[TAPS1], w2[TAPS2];
        int j0 = 0, j1 = 0;
#if DIM == 3
        j0 = nufft_taps(coords + p * 3 * COORD_STRIDE, beta, w0) - o0;
#else
        w0[0] = (R)1;
#endif
#if DIM >= 2
        j1 = nufft_taps(coords + (p * DIM + DIM - 2) * COORD_STRIDE, beta, w1) - o1;
#else
        w1[0] = (R)1;
#endif
        const int j2 = nufft_taps(coords + (p * DIM + DIM - 1) * COORD_STRIDE, beta, w2) - o2;
        const T value = in[(ulong)b * points + order[p]];
        // The last axis's taps four at a time as 8-wide vectors (real, imaginary interleaved): a work-group of one
        // is not vectorised across work-items, so the line update is written in vectors here.
        R8 quads[QUADS > 0 ? QUADS : 1];
        for (int q = 0; q < QUADS; q++) {
            const int t = 4 * q;
            quads[q] = (R8)(w2[t], w2[t], w2[t + 1], w2[t + 1], w2[t + 2], w2[t + 2], w2[t + 3], w2[t + 3]);
        }
        for (int t0 = 0; t0 < TAPS0; t0++) {
            for (int t1 = 0; t1 < TAPS1; t1++) {
                const T f = value * (w0[t0] * w1[t1]);
                global T* cells = tile + ((uint)(j0 + t0) * tile1 + (uint)(j1 + t1)) * tile2 + j2;
                global R* reals = (global R*)cells;
                const R8 fv = (R8)(f.x, f.y, f.x, f.y, f.x, f.y, f.x, f.y);
                for (int q = 0; q < QUADS; q++) vstore8(vload8(q, reals) + fv * quads[q], q, reals);
                for (int t2 = 4 * QUADS; t2 < TAPS2; t2++) cells[t2] += f * w2[t2];
            }
        }
    }
#else
    for (uint s = start; s < end; s += CHUNK) {
        const uint count = min((uint)CHUNK, end - s);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint q = lid; q < count; q += lsize) {
            const uint p = s + q;
            R w[W];
            local R* tq = taps + q * (TAPS0 + TAPS1 + TAPS2);
            int j;
#if DIM == 3
            j = nufft_taps(coords + p * 3 * COORD_STRIDE, beta, w);
            for (int t = 0; t < W; t++) tq[t] = w[t];
            offsets[q * 3] = j - o0;
#else
            tq[0] = (R)1;
            offsets[q * 3] = 0;
#endif
#if DIM >= 2
            j = nufft_taps(coords + (p * DIM + DIM - 2) * COORD_STRIDE, beta, w);
            for (int t = 0; t < W; t++) tq[TAPS0 + t] = w[t];
            offsets[q * 3 + 1] = j - o1;
#else
            tq[TAPS0] = (R)1;
            offsets[q * 3 + 1] = 0;
#endif
            j = nufft_taps(coords + (p * DIM + DIM - 1) * COORD_STRIDE, beta, w);
            for (int t = 0; t < W; t++) tq[TAPS0 + TAPS1 + t] = w[t];
            offsets[q * 3 + 2] = j - o2;
            values[q] = in[(ulong)b * points + order[p]];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint line = lid; line < lines; line += lsize) {
            const int l0 = (int)(line / tile1), l1 = (int)(line % tile1);
            TILE_SPACE T* row = tile + line * tile2;
            for (uint q = 0; q < count; q++) {
                const int t0 = l0 - offsets[q * 3], t1 = l1 - offsets[q * 3 + 1];
                if (t0 < 0 || t0 >= TAPS0 || t1 < 0 || t1 >= TAPS1) continue;
                local const R* tq = taps + q * (TAPS0 + TAPS1 + TAPS2);
                const T f = values[q] * (tq[t0] * tq[TAPS0 + t1]);
                TILE_SPACE T* cells = row + offsets[q * 3 + 2];
                for (int t2 = 0; t2 < TAPS2; t2++) cells[t2] += f * tq[TAPS0 + TAPS1 + t2];
            }
        }
    }
#if LOCAL_TILE
    // Each work-item copies out the lines it owned: no barrier needed.
    for (uint line = lid; line < lines; line += lsize)
        for (uint c = 0; c < tile2; c++) tile_out[line * tile2 + c] = tile[line * tile2 + c];
#endif
#endif
}

// The tiles along one axis that hold fine cell j, and j's place in each: the bins j's own, before and after it
// (fewer when there are fewer bins), every periodic image of j inside a tile (a point near one end of the grid
// reaches the other). Returns the count (at most 4).
inline int nufft_cover(const int j, const int n, const int bins, const int bin, const int lead, const int tile,
                       int* which, int* at) {
    int count = 0;
    const int own = j / bin;
    const int candidates = min(bins, 3);
    for (int k = 0; k < candidates; k++) {
        const int c = k == 0 ? own : (k == 1 ? (own + bins - 1) % bins : (own + 1) % bins);
        int t = (j - (c * bin - lead)) % n;
        if (t < 0) t += n;
        for (; t < tile && count < 4; t += n) {
            which[count] = c;
            at[count] = t;
            count++;
        }
    }
    return count;
}

// fine[b, j] = Σ over the tiles holding j of their cell j: type 1's second step.
kernel void nufft_assemble(global const T* tiles, global T* fine, uint batch, uint n0, uint n1, uint n2, uint bins0,
                           uint bins1, uint bins2, uint bin0, uint bin1, uint bin2, uint tile0, uint tile1,
                           uint tile2) {
    const ulong fine_size = (ulong)n0 * n1 * n2;
    const uint bins = bins0 * bins1 * bins2, tile_size = tile0 * tile1 * tile2;
    const int lead = W / 2 + MARGIN;
    for (ulong g = get_global_id(0); g < batch * fine_size; g += get_global_size(0)) {
        const ulong b = g / fine_size, j = g % fine_size;
        const int j2 = (int)(j % n2), j1 = (int)((j / n2) % n1), j0 = (int)(j / ((ulong)n2 * n1));
        int w0[4], a0[4], w1[4], a1[4], w2[4], a2[4];
        const int k0 = DIM == 3 ? nufft_cover(j0, n0, bins0, bin0, lead, tile0, w0, a0) : 1;
        const int k1 = DIM >= 2 ? nufft_cover(j1, n1, bins1, bin1, lead, tile1, w1, a1) : 1;
        const int k2 = nufft_cover(j2, n2, bins2, bin2, lead, tile2, w2, a2);
        if (DIM < 3) w0[0] = a0[0] = 0;
        if (DIM < 2) w1[0] = a1[0] = 0;
        global const T* base = tiles + b * bins * (ulong)tile_size;
        T sum = ZERO;
        for (int q0 = 0; q0 < k0; q0++)
            for (int q1 = 0; q1 < k1; q1++)
                for (int q2 = 0; q2 < k2; q2++) {
                    const uint t = ((uint)w0[q0] * bins1 + w1[q1]) * bins2 + w2[q2];
                    sum += base[(ulong)t * tile_size + ((uint)a0[q0] * tile1 + a1[q1]) * tile2 + a2[q2]];
                }
        fine[g] = sum;
    }
}

// spectrum[b, j] ·= transfer[j]: the Toeplitz normal operator's product with the point-spread function's
// spectrum, one transfer function for every batch entry.
kernel void nufft_multiply(global T* spectrum, global const T* transfer, uint batch, uint cells) {
    for (ulong g = get_global_id(0); g < (ulong)batch * cells; g += get_global_size(0)) {
        spectrum[g] = MUL(spectrum[g], transfer[g % cells]);
    }
}

// Coil combination (CoilSum, RSoS, and the reconstructions' last step).
//
// Build options besides common.cl's: COIL_MODE (below) and O, the output's type (default T; real for RSoS).

#ifndef O
#define O T
#endif

#define COIL_SUM 0       // Σ_c x
#define COIL_CONJ_SUM 1  // Σ_c x · conj(s)
#define COIL_RSOS 2      // √(Σ_c |x|²), real output

// out[f, p] = Σ over coils c of x[f, c, p] (times conj(s[c, p])), or the root sum of squares, for frames f and
// spatial positions p (each a merged axis with one stride). One work-item per output walks the coils, so
// neighbouring work-items read neighbouring positions.
kernel void coil_reduce(global const T* x, IDX x0, IDX xf, IDX xc, IDX xp, global const T* s, IDX s0, IDX sc,
                        IDX sp, global O* out, IDX o0, IDX of, IDX op, IDX frames, IDX coils, IDX positions) {
    IDX count = frames * positions;
    for (IDX g = get_global_id(0); g < count; g += get_global_size(0)) {
        IDX f = g / positions, p = g % positions;
        global const T* xs = x + x0 + f * xf + p * xp;
#if COIL_MODE == COIL_RSOS
        R sum = 0;
        for (IDX c = 0; c < coils; c++) {
            T v = xs[c * xc];
            sum += v.x * v.x + v.y * v.y;
        }
        out[o0 + f * of + p * op] = sqrt(sum);
#else
        T sum = ZERO;
        for (IDX c = 0; c < coils; c++) {
#if COIL_MODE == COIL_CONJ_SUM
            sum += MUL(xs[c * xc], CONJ(s[s0 + c * sc + p * sp]));
#else
            sum += xs[c * xc];
#endif
        }
        out[o0 + f * of + p * op] = sum;
#endif
    }
}

// ---- The SENSE operator (SenseOperator, CgSense): A x = √W · F_c(S · x) for an image x over up to three spatial
// axes (extents N0, N1, N2, row-major, unused ones 1; P positions), maps S [coils, P] and a real sampling pattern
// W [P] (BART's: weights enter the normal operator AᴴA once); F_c is the centred unitary DFT over the spatial axes,
// numpy's fftshift(fftn(ifftshift(·), norm="ortho")).
// F_c is computed as a plain FFT between two modulations: with c_d = N_d / 2 (integer division),
// F_c y [k] = g · w(k) · F(w · y)[k], where w(n) = exp(2πi Σ_d c_d n_d / N_d) and g = exp(−2πi Σ_d c_d² / N_d).
// Phases are taken in turns reduced modulo 1 with integer arithmetic (exact ±1 for even extents).

#if IS_COMPLEX
#define SENSE_FORWARD 0  // after the forward FFT: out = in · w · g · √W
#define SENSE_ADJOINT 1  // before the inverse FFT: out = in · conj(w · g) · √W
#define SENSE_NORMAL 2   // between the two FFTs of AᴴA (the modulations cancel): out = in · W

// The turns of w at position p (sign −1: conj(w)), with g's turns added when `with_g`.
inline R sense_turns(IDX p, uint n0, uint n1, uint n2, int with_g) {
    const ulong i2 = p % n2, i1 = (p / n2) % n1, i0 = p / ((ulong)n1 * n2);
    const ulong c0 = n0 / 2, c1 = n1 / 2, c2 = n2 / 2;
    R t = (R)((c0 * i0) % n0) / (R)n0 + (R)((c1 * i1) % n1) / (R)n1 + (R)((c2 * i2) % n2) / (R)n2;
    if (with_g) t -= (R)((c0 * c0) % n0) / (R)n0 + (R)((c1 * c1) % n1) / (R)n1 + (R)((c2 * c2) % n2) / (R)n2;
    return t - floor(t);
}

// exp(2πi · turns) as T.
inline T sense_phase(R turns) {
    return (T)(cospi((R)2 * turns), sinpi((R)2 * turns));
}

// Frames: images [frames, P] and k-space [frames, coils, P] share the maps; the pattern is [P] (mask_frames 1) or
// [frames, P]. Work-item q covers frame q / P at position q % P.

// out[f, c, p] = s[c, p] · w(p) · x[f, p]: one work-item per frame and position, over the coils.
kernel void sense_expand(global const T* x, global const T* s, global T* out, IDX coils, IDX positions, IDX frames,
                         uint n0, uint n1, uint n2) {
    for (IDX q = get_global_id(0); q < frames * positions; q += get_global_size(0)) {
        const IDX f = q / positions, p = q % positions;
        const T xw = MUL(x[q], sense_phase(sense_turns(p, n0, n1, n2, 0)));
        global T* o = out + f * coils * positions;
        for (IDX c = 0; c < coils; c++) o[c * positions + p] = MUL(s[c * positions + p], xw);
    }
}

// The mask step of the operator, `mode` one of the three above (uniform over the launch, so no divergence).
kernel void sense_weight(global const T* in, global const R* mask, global T* out, IDX coils, IDX positions,
                         IDX frames, IDX mask_frames, uint n0, uint n1, uint n2, uint mode) {
    for (IDX q = get_global_id(0); q < frames * positions; q += get_global_size(0)) {
        const IDX frame = q / positions, p = q % positions;
        const R m = mask[mask_frames > 1 ? q : p];
        T f;
        if (mode == SENSE_NORMAL) {
            f = (T)(m, (R)0);
        } else {
            const T w = sense_phase(sense_turns(p, n0, n1, n2, 1));
            f = sqrt(m) * (mode == SENSE_FORWARD ? w : CONJ(w));
        }
        const IDX base = frame * coils * positions;
        for (IDX c = 0; c < coils; c++) out[base + c * positions + p] = MUL(in[base + c * positions + p], f);
    }
}

// out[f, p] = conj(w(p)) · Σ_c conj(s[c, p]) · in[f, c, p].
kernel void sense_combine(global const T* in, global const T* s, global T* out, IDX coils, IDX positions, IDX frames,
                          uint n0, uint n1, uint n2) {
    for (IDX q = get_global_id(0); q < frames * positions; q += get_global_size(0)) {
        const IDX f = q / positions, p = q % positions;
        global const T* frame = in + f * coils * positions;
        T sum = ZERO;
        for (IDX c = 0; c < coils; c++) sum += MUL(frame[c * positions + p], CONJ(s[c * positions + p]));
        out[q] = MUL(sum, CONJ(sense_phase(sense_turns(p, n0, n1, n2, 0))));
    }
}

// The sampling pattern of k-space k [frames, coils, P] into mask [frames, P]: 1 where any coil's sample is not
// zero (as BART's pics infers it).
kernel void sense_pattern(global const T* k, global R* mask, IDX coils, IDX positions, IDX frames) {
    for (IDX q = get_global_id(0); q < frames * positions; q += get_global_size(0)) {
        const IDX f = q / positions, p = q % positions;
        R any = 0;
        for (IDX c = 0; c < coils; c++) {
            const T v = k[(f * coils + c) * positions + p];
            if (v.x != 0 || v.y != 0) any = 1;
        }
        mask[q] = any;
    }
}
#endif  // IS_COMPLEX

// ---- Coil maps as per-pixel principal eigenvectors (EspiritMaps, WalshMaps). Built with EIGEN_COILS (C, the
// coil count: each work-item keeps one row of its pixel's C × C Hermitian matrix in registers, so C must be a
// compile-time constant) and EIGEN_PIXELS (P): a work-group is P pixels × C coils, local id = c · P + p, so the
// P work-items of one coil row touch neighbouring pixels (coalesced reads and writes along y).
// Maps and images are [C, NX, NY] (y fastest); the pixel of group g and lane p is x = g / ⌈NY/P⌉,
// y = (g % ⌈NY/P⌉) · P + p. Lanes past NY compute on clamped data and write nothing.
#if defined(EIGEN_COILS) && IS_COMPLEX
#define NC EIGEN_COILS
#define NP EIGEN_PIXELS

// One pixel's power iterations, in the work-item of coil c and lane p: `row` is row c of the pixel's matrix, *xc
// the start vector's entry c (the eigenvector's on return). Each iteration is x ← M x, λ = ‖x‖, x ← x / λ (x = 0
// when λ = 0), as BART's ecalib and ismrmrd's Walsh method iterate; returns the last λ, equal in all C work-items
// of the pixel (each sums the same local values in the same order). `cur` and `next` are C × P local vectors.
// Every work-item of the group must call it (barriers).
inline R pixel_power(const T* row, T* xc, local T* cur, local T* next, uint c, uint p, uint iterations) {
    R lambda = 0;
    for (uint it = 0; it < iterations; it++) {
        cur[c * NP + p] = *xc;
        barrier(CLK_LOCAL_MEM_FENCE);
        T y = ZERO;
#pragma unroll
        for (uint d = 0; d < NC; d++) y += MUL(row[d], cur[d * NP + p]);
        next[c * NP + p] = y;
        barrier(CLK_LOCAL_MEM_FENCE);
        R sum = 0;
        for (uint d = 0; d < NC; d++) sum += dot(next[d * NP + p], next[d * NP + p]);
        lambda = sqrt(sum);
        *xc = lambda > 0 ? y / lambda : ZERO;
    }
    return lambda;
}

// Σ over the pixel's C work-items of v (through `scratch`, C × P local values), in every one of them.
inline T pixel_sum(T v, local T* scratch, uint c, uint p) {
    barrier(CLK_LOCAL_MEM_FENCE);
    scratch[c * NP + p] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    T sum = ZERO;
    for (uint d = 0; d < NC; d++) sum += scratch[d * NP + p];
    return sum;
}

// ESPIRiT's Casorati Gram on the device (GPUs; the host computes it on CPUs), from the calibration band at
// `band + base`, [C, NX, W] (y fastest): the block's sample (c, x, y) is band[base + (c · NX + x0 + x) · W + y0 + y]. The Casorati matrix
// A has a row per kernel position (sx, sy), sx fastest, and a column per (kx, ky, c), kx fastest. With
// `by_columns`, gram = AᴴA (K × K, K = kk² · C); else gram = AAᴴ (L × L over the positions). Row-major.
kernel void espirit_gram(global const T* band_buffer, ulong base, global T* gram, uint nx, uint w, uint x0, uint y0,
                         uint cx, uint cy, uint kk, uint by_columns) {
    global const T* band = band_buffer + base;
    const uint sxn = cx - kk + 1, positions = sxn * (cy - kk + 1), q_count = kk * kk;
    const uint n = by_columns ? q_count * NC : positions;
    for (uint id = get_global_id(0); id < n * n; id += get_global_size(0)) {
        const uint i = id / n, j = id % n;
        T sum = ZERO;
        if (by_columns) {
            const uint ci = i / q_count, qxi = i % kk, qyi = (i % q_count) / kk;
            const uint cj = j / q_count, qxj = j % kk, qyj = (j % q_count) / kk;
            global const T* a = band + (ci * nx + x0 + qxi) * w + y0 + qyi;
            global const T* b = band + (cj * nx + x0 + qxj) * w + y0 + qyj;
            for (uint sy = 0; sy + kk <= cy; sy++)
                for (uint sx = 0; sx < sxn; sx++) sum += MUL(CONJ(a[sx * w + sy]), b[sx * w + sy]);
        } else {
            const uint sxi = i % sxn, syi = i / sxn, sxj = j % sxn, syj = j / sxn;
            for (uint c = 0; c < NC; c++)
                for (uint qy = 0; qy < kk; qy++)
                    for (uint qx = 0; qx < kk; qx++) {
                        const uint at = (c * nx + x0 + qx) * w + y0 + qy;
                        sum += MUL(band[at + sxi * w + syi], CONJ(band[at + sxj * w + syj]));
                    }
        }
        gram[id] = sum;
    }
}

// ESPIRiT, step 1: the kept kernels' image-space values on the g × g grid, a[(r · C + c) · n + k] =
// Σ_q phase[r · Q + q] · conj(v[(q + Q · c) · n + k]) for grid point r, coil c, kernel k, kernel offsets q (Q of
// them; phase holds ifftmod and the inverse DFT's phases, from the host).
kernel void espirit_grid_kernels(global const T* v, global const T* phase, global T* a, uint grid, uint q_count,
                                 uint kernels) {
    const uint count = grid * NC * kernels;
    for (uint i = get_global_id(0); i < count; i += get_global_size(0)) {
        const uint k = i % kernels, c = (i / kernels) % NC, r = i / (kernels * NC);
        T sum = ZERO;
        for (uint q = 0; q < q_count; q++) sum += MUL(phase[r * q_count + q], CONJ(v[(q + q_count * c) * kernels + k]));
        a[i] = sum;
    }
}

// ESPIRiT, step 2: the grid's matrices w[(r · C + c) · C + d] = scale · Σ_k a[r, c, k] · conj(a[r, d, k]).
kernel void espirit_grid_matrices(global const T* a, global T* w, uint grid, uint kernels, R scale) {
    const uint count = grid * NC * NC;
    for (uint i = get_global_id(0); i < count; i += get_global_size(0)) {
        const uint d = i % NC, c = (i / NC) % NC, r = i / (NC * NC);
        global const T* ac = a + (r * NC + c) * kernels;
        global const T* ad = a + (r * NC + d) * kernels;
        T sum = ZERO;
        for (uint k = 0; k < kernels; k++) sum += MUL(ac[k], CONJ(ad[k]));
        w[i] = scale * sum;
    }
}

// ESPIRiT, step 3: the sinc interpolation of every entry along one axis, from g grid points to NY samples, with
// `outer` grid points before that axis and `inner` values after the entry riding along:
// wy[((o · C² + e) · NY + y) · inner + t] = Σ_j ry[y · g + j] · w[((o · g + j) · C² + e) · inner + t].
// 2-D: along y (outer g, inner 1). 3-D: along z (outer g², inner 1), then along y (outer g, inner NZ).
kernel void espirit_interpolate(global const T* w, global const T* ry, global T* wy, uint g, uint ny, uint outer,
                                uint inner) {
    const uint count = outer * NC * NC * ny * inner;
    for (uint i = get_global_id(0); i < count; i += get_global_size(0)) {
        const uint t = i % inner, y = (i / inner) % ny, e = (i / (inner * ny)) % (NC * NC);
        const uint o = i / (inner * ny * NC * NC);
        T sum = ZERO;
        for (uint j = 0; j < g; j++) sum += MUL(ry[y * g + j], w[((o * g + j) * NC * NC + e) * inner + t]);
        wy[i] = sum;
    }
}

// ESPIRiT, step 4, per pixel: row c of the pixel's matrix interpolated along x (Σ_i rx[x · g + i] · wy[i, c, ·, y]),
// `iterations` power iterations from e₀, 0 where λ < crop, then the phase turned so that Σ_c conj(z_c) · s_c is
// real and positive (z: the calibration data's principal component). Writes maps [C, NX, NY].
kernel void espirit_eigen(global const T* wy, global const T* rx, global const T* z, global T* maps, uint nx,
                          uint ny, uint g, uint iterations, R crop) {
    local T cur[NC * NP], next[NC * NP];
    const uint c = get_local_id(0) / NP, p = get_local_id(0) % NP;
    const uint blocks = (ny + NP - 1) / NP, x = get_group_id(0) / blocks;
    const uint y = (get_group_id(0) % blocks) * NP + p, yc = min(y, ny - 1);
    T row[NC];
#pragma unroll
    for (uint d = 0; d < NC; d++) row[d] = ZERO;
    for (uint i = 0; i < g; i++) {
        const T f = rx[x * g + i];
        global const T* src = wy + ((size_t)(i * NC + c) * NC) * ny + yc;
#pragma unroll
        for (uint d = 0; d < NC; d++) row[d] += MUL(f, src[(size_t)d * ny]);
    }
    T s = c == 0 ? FROM_REAL(1) : ZERO;
    const R lambda = pixel_power(row, &s, cur, next, c, p, iterations);
    if (!(lambda >= crop)) s = ZERO;
    const T t = pixel_sum(MUL(CONJ(z[c]), s), cur, c, p);
    const R m = length(t);
    if (m > 0) s = MUL(s, CONJ(t) / m);
    if (y < ny) maps[((size_t)c * nx + x) * ny + y] = s;
}

// pixel_power in one work-item: `iterations` power iterations x ← M x / ‖M x‖ on the private C × C matrix `m`
// (row-major) from the vector `s` (overwritten; x = 0 when λ = 0); returns the last λ.
inline R serial_power(const T* m, T* s, uint iterations) {
    T next[NC];
    R lambda = 0;
    for (uint it = 0; it < iterations; it++) {
        R sum = 0;
        for (uint c = 0; c < NC; c++) {
            T v = ZERO;
            for (uint d = 0; d < NC; d++) v += MUL(m[c * NC + d], s[d]);
            next[c] = v;
            sum += dot(v, v);
        }
        lambda = sqrt(sum);
        for (uint c = 0; c < NC; c++) s[c] = lambda > 0 ? next[c] / lambda : ZERO;
    }
    return lambda;
}

// The C × C matrix of pixel (x, y) in private memory: the sinc interpolation along x (rx) of the matrices already
// interpolated along y (wy), as the serial ESPIRiT kernels read it.
inline void pixel_matrix(global const T* wy, global const T* rx, uint x, uint y, uint ny, uint g, T* m) {
    for (uint e = 0; e < NC * NC; e++) m[e] = ZERO;
    for (uint i = 0; i < g; i++) {
        const T f = rx[x * g + i];
        global const T* src = wy + (size_t)i * NC * NC * ny + y;
        for (uint e = 0; e < NC * NC; e++) m[e] += MUL(f, src[(size_t)e * ny]);
    }
}

// espirit_eigen for CPU devices: one work-item per pixel (global size NX · NY, y fastest) keeps the pixel's whole
// C × C matrix in private memory and needs no barriers, which a CPU runs as straight loops over the work-items
// (the barrier-per-iteration layout above made PoCL keep each work-item's row in memory between regions).
kernel void espirit_eigen_serial(global const T* wy, global const T* rx, global const T* z, global T* maps, uint nx,
                                 uint ny, uint g, uint iterations, R crop) {
    const size_t pixels = (size_t)nx * ny;
    for (size_t id = get_global_id(0); id < pixels; id += get_global_size(0)) {
        const uint x = (uint)(id / ny), y = (uint)(id % ny);
        T m[NC * NC];
        pixel_matrix(wy, rx, x, y, ny, g, m);
        T s[NC];
        for (uint c = 0; c < NC; c++) s[c] = c == 0 ? FROM_REAL(1) : ZERO;
        const R lambda = serial_power(m, s, iterations);
        T t = ZERO;
        for (uint c = 0; c < NC; c++) {
            if (!(lambda >= crop)) s[c] = ZERO;
            t += MUL(CONJ(z[c]), s[c]);
        }
        const R mag = length(t);
        for (uint c = 0; c < NC; c++) maps[(size_t)c * pixels + id] = mag > 0 ? MUL(s[c], CONJ(t) / mag) : s[c];
    }
}

// Several ESPIRiT maps per pixel (`bart ecalib -m M`), one work-item per pixel on every device: BART's orthogonal
// iteration (`orthiter`: the rows of the M × C identity, then `iterations` times v ← M v for each vector and
// Gram–Schmidt from the last vector down, each against those after it), so vector M−1 is the power iteration from
// e_{M−1} and converges to the largest eigenvalue. Map u is vector M−1−u, zero where its Gram–Schmidt norm (the
// eigenvalue) is below `crop`, its phase turned as the one-map kernels do. Writes maps [M, C, NX, NY].
kernel void espirit_eigen_maps(global const T* wy, global const T* rx, global const T* z, global T* maps, uint nx,
                               uint ny, uint g, uint iterations, R crop, uint count) {
    const size_t pixels = (size_t)nx * ny;
    for (size_t id = get_global_id(0); id < pixels; id += get_global_size(0)) {
        const uint x = (uint)(id / ny), y = (uint)(id % ny);
        T m[NC * NC];
        pixel_matrix(wy, rx, x, y, ny, g, m);
        T v[NC * NC];
        R val[NC];
        for (uint u = 0; u < count; u++) {
            val[u] = 0;
            for (uint c = 0; c < NC; c++) v[u * NC + c] = u == c ? FROM_REAL(1) : ZERO;
        }
        for (uint it = 0; it < iterations; it++) {
            for (uint u = 0; u < count; u++) {
                T next[NC];
                for (uint c = 0; c < NC; c++) {
                    T acc = ZERO;
                    for (uint d = 0; d < NC; d++) acc += MUL(m[c * NC + d], v[u * NC + d]);
                    next[c] = acc;
                }
                for (uint c = 0; c < NC; c++) v[u * NC + c] = next[c];
            }
            for (uint i = count; i-- > 0;) {
                for (uint j = i + 1; j < count; j++) {
                    T dot_ij = ZERO;
                    for (uint c = 0; c < NC; c++) dot_ij += MUL(v[i * NC + c], CONJ(v[j * NC + c]));
                    for (uint c = 0; c < NC; c++) v[i * NC + c] -= MUL(dot_ij, v[j * NC + c]);
                }
                R sum = 0;
                for (uint c = 0; c < NC; c++) sum += dot(v[i * NC + c], v[i * NC + c]);
                val[i] = sqrt(sum);
                for (uint c = 0; c < NC; c++) v[i * NC + c] = val[i] > 0 ? v[i * NC + c] / val[i] : ZERO;
            }
        }
        for (uint u = 0; u < count; u++) {
            const uint r = count - 1 - u;
            T t = ZERO;
            for (uint c = 0; c < NC; c++) {
                if (!(val[r] >= crop)) v[r * NC + c] = ZERO;
                t += MUL(CONJ(z[c]), v[r * NC + c]);
            }
            const R mag = length(t);
            for (uint c = 0; c < NC; c++)
                maps[((size_t)u * NC + c) * pixels + id] = mag > 0 ? MUL(v[r * NC + c], CONJ(t) / mag) : v[r * NC + c];
        }
    }
}

// Walsh's method as ismrmrd-python-tools' calculate_csm_walsh: per pixel, the coil images' covariance
// R[c, d] = mean over a box × box window of img_c · conj(img_d) (scipy's uniform_filter, 'reflect' border: BORDER
// must be BORDER_SYMMETRIC), then `iterations` power iterations from the normalised column sums
// v_d = Σ_c R[c, d] = conj(Σ_c R[d, c]). Writes the eigenvector (no crop, no phase reference) as maps [C, NX, NY].
kernel void walsh_eigen(global const T* img, global T* maps, uint nx, uint ny, uint box, uint iterations) {
    local T cur[NC * NP], next[NC * NP];
    const uint c = get_local_id(0) / NP, p = get_local_id(0) % NP;
    const uint blocks = (ny + NP - 1) / NP, x = get_group_id(0) / blocks;
    const uint y = (get_group_id(0) % blocks) * NP + p, yc = min(y, ny - 1);
    const size_t plane = (size_t)nx * ny;
    T row[NC];
#pragma unroll
    for (uint d = 0; d < NC; d++) row[d] = ZERO;
    const int lo = -(int)(box / 2);
    for (int u = lo; u < lo + (int)box; u++) {
        const int xu = border_index((int)x + u, (int)nx);
        for (int v = lo; v < lo + (int)box; v++) {
            const size_t at = (size_t)xu * ny + border_index((int)yc + v, (int)ny);
            const T ic = img[c * plane + at];
#pragma unroll
            for (uint d = 0; d < NC; d++) row[d] += MUL(ic, CONJ(img[d * plane + at]));
        }
    }
    const R mean = (R)1 / (R)(box * box);
    T start = ZERO;
#pragma unroll
    for (uint d = 0; d < NC; d++) {
        row[d] *= mean;
        start += row[d];
    }
    start = CONJ(start);
    const R norm = sqrt(pixel_sum(FROM_REAL(dot(start, start)), cur, c, p).x);
    T s = norm > 0 ? start / norm : ZERO;
    pixel_power(row, &s, cur, next, c, p, iterations);
    if (y < ny) maps[(size_t)c * plane + (size_t)x * ny + y] = s;
}
// walsh_eigen for CPU devices: one work-item per pixel (global size NX · NY, y fastest), the whole covariance in
// private memory and no barriers (as espirit_eigen_serial).
kernel void walsh_eigen_serial(global const T* img, global T* maps, uint nx, uint ny, uint box, uint iterations) {
    const size_t plane = (size_t)nx * ny;
    for (size_t id = get_global_id(0); id < plane; id += get_global_size(0)) {
        const int x = (int)(id / ny), y = (int)(id % ny);
        T m[NC * NC];
        for (uint e = 0; e < NC * NC; e++) m[e] = ZERO;
        const int lo = -(int)(box / 2);
        for (int u = lo; u < lo + (int)box; u++) {
            const int xu = border_index(x + u, (int)nx);
            for (int v = lo; v < lo + (int)box; v++) {
                const size_t at = (size_t)xu * ny + border_index(y + v, (int)ny);
                for (uint c = 0; c < NC; c++) {
                    const T ic = img[c * plane + at];
                    for (uint d = 0; d < NC; d++) m[c * NC + d] += MUL(ic, CONJ(img[d * plane + at]));
                }
            }
        }
        const R mean = (R)1 / (R)(box * box);
        T s[NC];
        R sum = 0;
        for (uint c = 0; c < NC; c++) {
            T row = ZERO;
            for (uint d = 0; d < NC; d++) {
                m[c * NC + d] *= mean;
                row += m[c * NC + d];
            }
            s[c] = CONJ(row);
            sum += dot(row, row);
        }
        const R norm = sqrt(sum);
        for (uint c = 0; c < NC; c++) s[c] = norm > 0 ? s[c] / norm : ZERO;
        serial_power(m, s, iterations);
        for (uint c = 0; c < NC; c++) maps[c * plane + id] = s[c];
    }
}
#endif  // EIGEN_COILS && IS_COMPLEX

// out[c, p] = s[c, p] · x[p]: the maps applied to an image (the non-Cartesian SENSE operator's first step; no
// centring modulation: the NUFFT centres by its own indices).
kernel void coil_expand(global const T* x, global const T* s, global T* out, IDX coils, IDX positions) {
    for (IDX p = get_global_id(0); p < positions; p += get_global_size(0)) {
        const T xp = x[p];
        for (IDX c = 0; c < coils; c++) out[c * positions + p] = MUL(s[c * positions + p], xp);
    }
}

// out[p] = Σ_c conj(s[c, p]) · in[c, p], coils summed in order.
kernel void coil_combine(global const T* in, global const T* s, global T* out, IDX coils, IDX positions) {
    for (IDX p = get_global_id(0); p < positions; p += get_global_size(0)) {
        T sum = ZERO;
        for (IDX c = 0; c < coils; c++) sum += MUL(in[c * positions + p], CONJ(s[c * positions + p]));
        out[p] = sum;
    }
}

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

// out[c, p] = s[c, p] · w(p) · x[p]: one work-item per position, over the coils.
kernel void sense_expand(global const T* x, global const T* s, global T* out, IDX coils, IDX positions, uint n0,
                         uint n1, uint n2) {
    for (IDX p = get_global_id(0); p < positions; p += get_global_size(0)) {
        const T xw = MUL(x[p], sense_phase(sense_turns(p, n0, n1, n2, 0)));
        for (IDX c = 0; c < coils; c++) out[c * positions + p] = MUL(s[c * positions + p], xw);
    }
}

// The mask step of the operator, `mode` one of the three above (uniform over the launch, so no divergence).
kernel void sense_weight(global const T* in, global const R* mask, global T* out, IDX coils, IDX positions, uint n0,
                         uint n1, uint n2, uint mode) {
    for (IDX p = get_global_id(0); p < positions; p += get_global_size(0)) {
        T f;
        if (mode == SENSE_NORMAL) {
            f = (T)(mask[p], (R)0);
        } else {
            const T w = sense_phase(sense_turns(p, n0, n1, n2, 1));
            f = sqrt(mask[p]) * (mode == SENSE_FORWARD ? w : CONJ(w));
        }
        for (IDX c = 0; c < coils; c++) out[c * positions + p] = MUL(in[c * positions + p], f);
    }
}

// out[p] = conj(w(p)) · Σ_c conj(s[c, p]) · in[c, p].
kernel void sense_combine(global const T* in, global const T* s, global T* out, IDX coils, IDX positions, uint n0,
                          uint n1, uint n2) {
    for (IDX p = get_global_id(0); p < positions; p += get_global_size(0)) {
        T sum = ZERO;
        for (IDX c = 0; c < coils; c++) sum += MUL(in[c * positions + p], CONJ(s[c * positions + p]));
        out[p] = MUL(sum, CONJ(sense_phase(sense_turns(p, n0, n1, n2, 0))));
    }
}

// The sampling pattern of k-space k [coils, P]: 1 where any coil's sample is not zero (as BART's pics infers it).
kernel void sense_pattern(global const T* k, global R* mask, IDX coils, IDX positions) {
    for (IDX p = get_global_id(0); p < positions; p += get_global_size(0)) {
        R any = 0;
        for (IDX c = 0; c < coils; c++) {
            const T v = k[c * positions + p];
            if (v.x != 0 || v.y != 0) any = 1;
        }
        mask[p] = any;
    }
}
#endif  // IS_COMPLEX

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

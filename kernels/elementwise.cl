// Element-wise processes (ComplexElementProd, ApplyMask, Complex2Real, ScalarMultiply, Fill), the coil
// reductions (CoilSum, RSoS) and FftShift.
//
// Build options besides common.cl's: OP (below), Y the second operand's type and O the output's (default T).

#ifndef Y
#define Y T
#endif
#ifndef O
#define O T
#endif

#define OP_MUL 1       // x · y
#define OP_MUL_CONJ 2  // x · conj(y)
#define OP_MASK 3      // x · y, y real
#define OP_REAL 4      // Re x
#define OP_IMAG 5      // Im x
#define OP_ABS 6       // |x|
#define OP_ARG 7       // arg x, in (−π, π]
#define OP_SCALE 8     // x · scalar
#define OP_FILL 9      // scalar
#define OP_WIDEN 10     // x as the complex type O: (x, 0) for real T, x itself for complex T
#define OP_NARROW 11    // x (complex T) as O: itself, or its real part when O is real (O_IS_COMPLEX 0)

#ifdef OP
// out = OP(x, y) over a batch of up to eight (merged) axes; strides of 0 broadcast. x, y and out may be the same
// array (in place), so no `restrict`.
kernel void elementwise(global const T* x, IDX x0, global const Y* y, IDX y0, global O* out, IDX o0, uint nd,
                        ulong8 shape, ulong8 sx, ulong8 sy, ulong8 so, IDX count, T scalar) {
    for (IDX b = get_global_id(0); b < count; b += get_global_size(0)) {
        IDX ox, oy, oo;
        batch_offsets3(b, nd, shape, sx, sy, so, &ox, &oy, &oo);
#if OP == OP_FILL
        out[o0 + oo] = scalar;
#else
        T a = x[x0 + ox];
#if OP == OP_MUL
        out[o0 + oo] = MUL(a, y[y0 + oy]);
#elif OP == OP_MUL_CONJ
        out[o0 + oo] = MUL(a, CONJ(y[y0 + oy]));
#elif OP == OP_MASK
        out[o0 + oo] = a * y[y0 + oy];
#elif OP == OP_REAL
        out[o0 + oo] = a.x;
#elif OP == OP_IMAG
        out[o0 + oo] = a.y;
#elif OP == OP_ABS
        out[o0 + oo] = hypot(a.x, a.y);
#elif OP == OP_ARG
        out[o0 + oo] = atan2(a.y, a.x);
#elif OP == OP_SCALE
        out[o0 + oo] = MUL(a, scalar);
#elif OP == OP_WIDEN
#if IS_COMPLEX
        out[o0 + oo] = a;
#else
        out[o0 + oo] = (O)(a, (T)0);
#endif
#elif OP == OP_NARROW
#if O_IS_COMPLEX
        out[o0 + oo] = a;
#else
        out[o0 + oo] = a.x;
#endif
#endif
#endif
    }
}
#endif

#define COIL_SUM 0       // Σ_c x
#define COIL_CONJ_SUM 1  // Σ_c x · conj(s)
#define COIL_RSOS 2      // √(Σ_c |x|²), real output

#ifdef COIL_MODE
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
#endif

#ifdef ROLL
// numpy.roll over up to eight axes: out[i] = x[(i − shift) mod n] along each axis, unrolled over the ulong8
// components like batch_offsets3.
#define ROLL_AXIS(k, c) \
    if ((k) < nd) { \
        const IDX n = (IDX)shape.c; \
        const IDX i = rest % n; \
        rest /= n; \
        IDX from = i + n - (IDX)shift.c; \
        if (from >= n) from -= n; \
        ox += from * (IDX)sx.c; \
        oo += i * (IDX)so.c; \
    }

kernel void roll(global const T* restrict x, IDX x0, global T* restrict out, IDX o0, uint nd, ulong8 shape,
                 ulong8 shift, ulong8 sx, ulong8 so, IDX count) {
    for (IDX b = get_global_id(0); b < count; b += get_global_size(0)) {
        IDX rest = b, ox = 0, oo = 0;
        ROLL_AXIS(7, s7) ROLL_AXIS(6, s6) ROLL_AXIS(5, s5) ROLL_AXIS(4, s4)
        ROLL_AXIS(3, s3) ROLL_AXIS(2, s2) ROLL_AXIS(1, s1) ROLL_AXIS(0, s0)
        out[o0 + oo] = x[x0 + ox];
    }
}
#endif

// Element-wise processes (ComplexElementProd, ApplyMask, Complex2Real, ScalarMultiply, Fill): one kernel,
// specialised per operation and element types by build options.
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

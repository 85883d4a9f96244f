// Shared by every cliper kernel source (prepended by the host). The host defines, through build options:
//   T           element type: float, double, float2 or double2
//   R           its real type: float or double
//   IS_COMPLEX  1 when T is float2/double2
//   IS_DOUBLE   1 when T needs cl_khr_fp64
//   IDX         index type, uint or ulong, chosen from the largest index the launch can form
#if IS_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#if IS_COMPLEX
#define CONJ(v) ((T)((v).x, -(v).y))
#else
#define CONJ(v) (v)
#endif

// A T from a real value (imaginary part zero for complex T).
#if IS_COMPLEX
#define FROM_REAL(v) ((T)((R)(v), (R)0))
#else
#define FROM_REAL(v) ((T)(v))
#endif

// The element offsets, in three arrays, of entry `b` of a row-major batch over `nd` (<= 8) axes whose extents and
// strides travel in ulong8 arguments (for example the two operands and the result of a batched product):
// batch_offsets3(b, nd, shape, stride_a, stride_b, stride_c, &off_a, &off_b, &off_c) stores them (a statement).
// Unrolled over the vector components: indexing a private array with a loop variable would put it in off-chip
// "local" memory on NVIDIA GPUs (measured: a batched transpose ran 4x slower that way). Axis nd-1 is the
// fastest, so the steps run from component 7 down to 0.
// A macro, not a function: passing a ulong8 to a function by value changes the calling convention on x86 CPUs
// without AVX-512 (PoCL warns at every such call), and the macro expands to what an inlined function gave.
#define BATCH_AXIS3(k, c, shape, sa, sb, sc) \
    if ((k) < bo_nd_) { \
        const IDX bo_extent_ = (IDX)(shape).c; \
        const IDX bo_i_ = bo_rest_ % bo_extent_; \
        bo_rest_ /= bo_extent_; \
        bo_a_ += bo_i_ * (IDX)(sa).c; \
        bo_b_ += bo_i_ * (IDX)(sb).c; \
        bo_c_ += bo_i_ * (IDX)(sc).c; \
    }

#define batch_offsets3(b, nd, shape, stride_a, stride_b, stride_c, off_a, off_b, off_c) \
    do { \
        IDX bo_rest_ = (b), bo_a_ = 0, bo_b_ = 0, bo_c_ = 0; \
        const uint bo_nd_ = (nd); \
        BATCH_AXIS3(7, s7, shape, stride_a, stride_b, stride_c) \
        BATCH_AXIS3(6, s6, shape, stride_a, stride_b, stride_c) \
        BATCH_AXIS3(5, s5, shape, stride_a, stride_b, stride_c) \
        BATCH_AXIS3(4, s4, shape, stride_a, stride_b, stride_c) \
        BATCH_AXIS3(3, s3, shape, stride_a, stride_b, stride_c) \
        BATCH_AXIS3(2, s2, shape, stride_a, stride_b, stride_c) \
        BATCH_AXIS3(1, s1, shape, stride_a, stride_b, stride_c) \
        BATCH_AXIS3(0, s0, shape, stride_a, stride_b, stride_c) \
        *(off_a) = bo_a_; \
        *(off_b) = bo_b_; \
        *(off_c) = bo_c_; \
    } while (0)

// batch_offsets3 for two arrays (the third accumulator is dead code).
#define batch_offsets(b, nd, shape, stride_a, stride_b, off_a, off_b) \
    do { \
        IDX bo_unused_; \
        batch_offsets3(b, nd, shape, stride_a, stride_b, stride_b, off_a, off_b, &bo_unused_); \
    } while (0)

// Run: VW elements of T read or written as one 16-byte vector VT, for kernels whose host passes -DVW -DVT
// (only where the addresses are 16-byte aligned). VW is 1 otherwise.
#ifndef VW
#define VW 1
#endif
#ifdef VT
typedef union {
    VT v;
    T s[VW];
} Run;
#endif

// Complex (or real) product and the zero of T.
#if IS_COMPLEX
#define MUL(a, b) ((T)((a).x * (b).x - (a).y * (b).y, (a).x * (b).y + (a).y * (b).x))
#else
#define MUL(a, b) ((a) * (b))
#endif
#define ZERO ((T)0)

// ---- Borders (Pad, convolutions). When BORDER is defined, border_index(i, n) maps a coordinate i of an axis of
// extent n >= 1 inside [0, n) by numpy.pad's rule, or returns -1 for BORDER_CONSTANT (the caller substitutes the
// constant). Widths larger than the axis repeat the rule periodically, as numpy does.
#define BORDER_CONSTANT 0
#define BORDER_EDGE 1
#define BORDER_REFLECT 2   // numpy 'reflect' (scipy 'mirror'): d c b | a b c d | c b a, period 2n - 2
#define BORDER_SYMMETRIC 3 // numpy 'symmetric' (scipy 'reflect'): c b a | a b c d | d c b, period 2n
#define BORDER_WRAP 4      // numpy and scipy 'wrap': period n
#ifdef BORDER
inline int border_index(int i, int n) {
    if (i >= 0 && i < n) return i;
#if BORDER == BORDER_CONSTANT
    return -1;
#elif BORDER == BORDER_EDGE
    return i < 0 ? 0 : n - 1;
#else
    // Within one period of the array (every halo narrower than the array) the rules need no division: kernels
    // that compute this for whole tiles at once (the compiler predicates both branches) stay cheap. Further out,
    // the periodic rule with a remainder.
#if BORDER == BORDER_WRAP
    if (i >= -n && i < 2 * n) return i < 0 ? i + n : i - n;
    const int m = i % n;
    return m < 0 ? m + n : m;
#elif BORDER == BORDER_SYMMETRIC
    if (i >= -n && i < 2 * n) return i < 0 ? -1 - i : 2 * n - 1 - i;
    const int period = 2 * n;
    int m = i % period;
    if (m < 0) m += period;
    return m < n ? m : period - 1 - m;
#else
    if (n == 1) return 0;
    if (i > -n && i < 2 * n - 1) return i < 0 ? -i : 2 * n - 2 - i;
    const int period = 2 * n - 2;
    int m = i % period;
    if (m < 0) m += period;
    return m < n ? m : period - m;
#endif
#endif
}
#endif

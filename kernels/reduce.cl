// Reductions: norms and dot products, over a whole array or along one axis, as tree reductions (no atomics).
// Prepended by common.cl. The host presents the work as `outputs` independent reductions of length L: element j
// of reduction o is x[x_off + off_x(o) + j·sx] (and y likewise), where off_x(o) comes from up to 8 batch axes.
// Build options:
//   OP_NORM      1: ‖x‖_p; 0: Σ op(x)·y
//   P_KIND       norms: 1 (p = 1), 2 (p = 2), 3 (other integer p, pown), 4 (other real p, pow), 5 (p = ∞)
//   CONJ_X       dot products: 1 conjugates x (dotc, numpy.vdot)
//   WG           work-group size of the tree kernels (a power of two)

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define R2 CAT(R, 2)

#if OP_NORM
// Norms accumulate (scale, sum) pairs: the value so far is scale·sum^(1/p), with scale the largest |x| seen, so
// no power of an element overflows or underflows before it matters (LAPACK's xNRM2 idea, for any p). NaN
// inputs poison the sum; ∞ becomes the scale and the sum stays finite.
#define ACC R2
#define OUT R

inline R magnitude(T v) {
#if IS_COMPLEX
    return hypot(v.x, v.y);
#else
    return fabs(v);
#endif
}

// t^p for 0 <= t <= 1 (0 for p = ∞, where only the scale counts).
inline R powp(R t, R p, int ip) {
#if P_KIND == 1
    return t;
#elif P_KIND == 2
    return t * t;
#elif P_KIND == 3
    return pown(t, ip);
#elif P_KIND == 4
    return pow(t, p);
#else
    return (R)0;
#endif
}

inline ACC acc_add(ACC acc, R ax, R p, int ip) {
    if (ax > acc.x) {
        acc.y = (R)1 + acc.y * powp(acc.x / ax, p, ip);
        acc.x = ax;
    } else if (ax == acc.x) {
        if (ax > (R)0) acc.y += powp((R)1, p, ip);
    } else if (ax > (R)0) {
        acc.y += powp(ax / acc.x, p, ip);
    } else if (isnan(ax)) {
        acc.y = NAN;
    }
    return acc;
}

inline ACC acc_merge(ACC a, ACC b, R p, int ip) {
    if (b.x > a.x) {
        const ACC t = a;
        a = b;
        b = t;
    }
    // A zero or NaN sum times powp(0) keeps its zero or NaN.
    a.y += (a.x == b.x) ? b.y : b.y * powp(b.x / a.x, p, ip);
    return a;
}

inline OUT acc_final(ACC a, R p) {
#if P_KIND == 5
    return isnan(a.y) ? (R)NAN : a.x;
#elif P_KIND == 1
    return a.x * a.y;
#elif P_KIND == 2
    return a.x * sqrt(a.y);
#else
    return a.x * pow(a.y, (R)1 / p);
#endif
}

#define ACC_ZERO ((ACC)((R)0, (R)0))
#define ACC_ADD(acc, xp, yp, j) acc = acc_add(acc, magnitude(xp[(j) * sx]), p, ip)
#define ACC_MERGE(a, b) acc_merge(a, b, p, ip)
#define ACC_FINAL(a) acc_final(a, p)

#else
#define ACC T
#define OUT T
#if CONJ_X
#define OP_X(v) CONJ(v)
#else
#define OP_X(v) (v)
#endif
#define ACC_ZERO ZERO
#define ACC_ADD(acc, xp, yp, j) acc += MUL(OP_X(xp[(j) * sx]), yp[(j) * sy])
#define ACC_MERGE(a, b) ((a) + (b))
#define ACC_FINAL(a) (a)
#endif

// Halving tree over the work-group's WG partials in local memory; the result lands in scratch[0].
#define TREE(scratch, lid) \
    for (uint s_ = WG / 2; s_ > 0; s_ >>= 1) { \
        barrier(CLK_LOCAL_MEM_FENCE); \
        if ((lid) < s_) scratch[lid] = ACC_MERGE(scratch[lid], scratch[(lid) + s_]); \
    } \
    barrier(CLK_LOCAL_MEM_FENCE)

// Pass 1: work-group (c, o) reduces the grid-stride slice c of reduction o (work-item i of slice c takes
// elements j ≡ c·WG + i mod chunks·WG). With one chunk per reduction it writes the final value; otherwise a
// partial that reduce_partials finishes.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_groups(__global const T* restrict x, IDX x_off, IDX sx, __global const T* restrict y, IDX y_off, IDX sy,
                   IDX len, uint nd, ulong8 shape, ulong8 batch_x, ulong8 batch_y, ulong8 batch_out,
                   __global ACC* partials, __global OUT* out, IDX out_off, uint finalize, R p, int ip)
{
    __local ACC scratch[WG];
    const uint lid = get_local_id(0);
    const IDX o = get_global_id(1), c = get_group_id(0), chunks = get_num_groups(0);
    IDX ox = 0, oy = 0, oo = 0;
    if (nd > 0) batch_offsets3(o, nd, shape, batch_x, batch_y, batch_out, &ox, &oy, &oo);
    __global const T* xp = x + x_off + ox;
    __global const T* yp = y + y_off + oy;
    ACC acc = ACC_ZERO;
    for (IDX j = c * WG + lid; j < len; j += chunks * WG) ACC_ADD(acc, xp, yp, j);
    scratch[lid] = acc;
    TREE(scratch, lid);
    if (lid == 0) {
        if (finalize) out[out_off + oo] = ACC_FINAL(scratch[0]);
        else partials[o * chunks + c] = scratch[0];
    }
}

// Pass 2: work-group o merges the `chunks` partials of reduction o and writes the result.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_partials(__global const ACC* restrict partials, IDX chunks, uint nd, ulong8 shape, ulong8 batch_out,
                     __global OUT* out, IDX out_off, R p, int ip)
{
    __local ACC scratch[WG];
    const uint lid = get_local_id(0);
    const IDX o = get_group_id(0);
    ACC acc = ACC_ZERO;
    for (IDX j = lid; j < chunks; j += WG) acc = ACC_MERGE(acc, partials[o * chunks + j]);
    scratch[lid] = acc;
    TREE(scratch, lid);
    if (lid == 0) {
        IDX oo = 0, unused = 0;
        if (nd > 0) batch_offsets(o, nd, shape, batch_out, batch_out, &oo, &unused);
        out[out_off + oo] = ACC_FINAL(scratch[0]);
    }
}

// Many short reductions along a strided axis (for example per-column norms of a row-major matrix): one
// work-item per reduction, so neighbouring work-items read neighbouring elements.
__kernel void reduce_lanes(__global const T* restrict x, IDX x_off, IDX sx, __global const T* restrict y, IDX y_off,
                           IDX sy, IDX len, uint nd, ulong8 shape, ulong8 batch_x, ulong8 batch_y, ulong8 batch_out,
                           IDX outputs, __global OUT* out, IDX out_off, R p, int ip)
{
    const IDX o = get_global_id(0);
    if (o >= outputs) return;
    IDX ox = 0, oy = 0, oo = 0;
    if (nd > 0) batch_offsets3(o, nd, shape, batch_x, batch_y, batch_out, &ox, &oy, &oo);
    __global const T* xp = x + x_off + ox;
    __global const T* yp = y + y_off + oy;
    ACC acc = ACC_ZERO;
    for (IDX j = 0; j < len; j++) ACC_ADD(acc, xp, yp, j);
    out[out_off + oo] = ACC_FINAL(acc);
}

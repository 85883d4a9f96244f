// Reductions: norms and dot products, over a whole array or along one axis, as tree reductions (no atomics).
// Prepended by common.cl. The host presents the work as `outputs` independent reductions of length L: element j
// of reduction o is x[x_off + off_x(o) + j·sx] (and y likewise), where off_x(o) comes from up to 8 batch axes.
// Build options:
//   OP_NORM      1: ‖x‖_p; 0: Σ op(x)·y
//   P_KIND       norms: 1 (p = 1), 2 (p = 2), 3 (other integer p), 4 (other real p, pow), 5 (p = ∞)
//   CONJ_X       dot products: 1 conjugates x (dotc, numpy.vdot)
//   WG           work-group size of the tree kernels (a power of two)
//   VW, VT       reduce_groups: VW elements are read at once as one VT (16 bytes) when VW > 1; the host sets
//                VW > 1 only for unit strides and starts of every reduction on a 16-byte boundary

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define R2 CAT(R, 2)

#if OP_NORM
// Each work-item keeps m, the largest |x| it has seen, and s = Σ (|x|/m)^p: every term lies in [0, 1], so nothing
// overflows or underflows before it matters (LAPACK's xNRM2 idea, for any p). Dividing by m is two multiplies:
// by 2^-(e - e/2) (exact) and by 2^(e - e/2)/m, with e = ilogb(m) + 1: each is representable where 1/m may not
// be (m subnormal or near the largest finite value). Only a new largest |x| (rare after the first few elements), NaN or ∞ takes the slow
// branch. Partials travel as (m, s). NaN anywhere gives NaN; otherwise ∞ anywhere gives ∞. For p = ∞, m is the
// largest |x| and s only flags NaN.
#define ACC R2
#define OUT R

// t^p for 0 <= t <= 1.
inline R powp(R t, R p, int ip) {
#if P_KIND == 1
    return t;
#elif P_KIND == 2
    return t * t;
#elif P_KIND == 3
    // Square-and-multiply on the bits of p: log2(p) products, where pown may go through exp and log. IP, when
    // the host compiles p in (small p), unrolls it into a handful of multiplies (p = 20: 5).
#ifdef IP
    const int bits = IP;
#else
    const int bits = ip;
#endif
    R r = (R)1;
#ifdef IP
    // Only with IP: a loop whose trip count is not a compile-time constant cannot be unrolled fully (LLVM warns).
    #pragma unroll
#endif
    for (int n = bits; n > 0; n >>= 1) {
        if (n & 1) r *= t;
        t *= t;
    }
    return r;
#elif P_KIND == 4
    return pow(t, p);
#else
    return (R)0;
#endif
}

typedef struct {
    R m, s;   // as in a partial
    R ih, k;  // 1/m as two factors (0 before the first non-zero |x| and after an ∞)
} Item;

inline void item_init(Item* it) { it->m = it->s = it->ih = it->k = (R)0; }

// The slow branch: |x| > m, or NaN.
inline void item_rare(Item* it, R ax, R p, int ip) {
    if (isnan(ax)) {
        it->s = NAN;
#if P_KIND == 5
    } else {
        it->m = ax;
    }
#else
    } else if (isinf(ax)) {
        // A second ∞ changes nothing (and must not reach the fast branch: ∞·0 would be NaN).
        if (!isinf(it->m)) {
            it->m = ax;
            it->s *= (R)0; // keeps a NaN
            it->ih = it->k = (R)0;
        }
    } else {
        it->s = it->s * powp(it->m / ax, p, ip) + (R)1;
        it->m = ax;
        const int e = ilogb(ax) + 1;
        it->ih = ldexp((R)1, -(e - e / 2));
        it->k = ldexp((R)1, e - e / 2) / ax; // 2^-(e/2)·c, within a factor 2 of 2^-(e/2)
    }
#endif
}

inline void item_add_mag(Item* it, R ax, R p, int ip) {
    if (ax <= it->m && !isinf(ax)) {
#if P_KIND != 5
        it->s += powp(ax * it->ih * it->k, p, ip);
#endif
    } else {
        item_rare(it, ax, p, ip);
    }
}

inline void item_add(Item* it, T v, R p, int ip) {
#if IS_COMPLEX && P_KIND == 2
    // ‖z‖₂² = Σ re² + im²: the components count as two real elements, no hypot.
    item_add_mag(it, fabs(v.x), p, ip);
    item_add_mag(it, fabs(v.y), p, ip);
#elif IS_COMPLEX
    item_add_mag(it, hypot(v.x, v.y), p, ip);
#else
    item_add_mag(it, fabs(v), p, ip);
#endif
}

inline ACC item_partial(Item* it) { return (ACC)(it->m, it->s); }

inline ACC acc_merge(ACC a, ACC b, R p, int ip) {
#if P_KIND == 5
    return (ACC)(fmax(a.x, b.x), a.y + b.y);
#else
    if (b.x > a.x) {
        const ACC t = a;
        a = b;
        b = t;
    }
    if (isnan(b.y)) a.y = b.y;
    else if (isinf(a.x)) a.y *= (R)0;
    else if (b.x > (R)0) a.y += b.y * powp(b.x / a.x, p, ip);
    return a;
#endif
}

inline OUT acc_final(ACC a, R p) {
    if (isnan(a.y)) return (R)NAN;
#if P_KIND == 5
    return a.x;
#else
    if (a.x == (R)0 || isinf(a.x)) return a.x;
#if P_KIND == 1
    return a.x * a.y;
#elif P_KIND == 2
    return a.x * sqrt(a.y);
#else
    return a.x * pow(a.y, (R)1 / p);
#endif
#endif
}

#define ITEM Item
#define ITEM_INIT(it) item_init(&it)
#define ITEM_ADD(it, xv, yv) item_add(&it, xv, p, ip)
#define ITEM_PARTIAL(it) item_partial(&it)
#define ACC_ZERO ((ACC)((R)0, (R)0))
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
#define ITEM T
#define ITEM_INIT(it) it = ZERO
#define ITEM_ADD(it, xv, yv) it += MUL(OP_X(xv), yv)
#define ITEM_PARTIAL(it) (it)
#define ACC_ZERO ZERO
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

// A program holds the kernels of its plan (LANES: reduce_lanes; else reduce_groups and reduce_partials): NVIDIA's
// compiler takes time for every kernel of a program, launched or not.
#if !LANES
// Pass 1: work-group (c, o) reduces the grid-stride slice c of reduction o (work-item i of slice c takes
// elements — or VW-element runs — j ≡ c·WG + i mod chunks·WG). With one chunk per reduction it writes the
// final value; otherwise a partial that reduce_partials finishes.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_groups(__global const T* restrict x, IDX x_off, IDX sx, __global const T* restrict y, IDX y_off, IDX sy,
                   IDX len, uint nd, ulong8 shape, ulong8 batch_x, ulong8 batch_y, ulong8 batch_out,
                   __global ACC* partials, __global OUT* out, IDX out_off, uint finalize, R p, int ip)
{
    __local ACC scratch[WG];
    const uint lid = get_local_id(0);
    const IDX o = get_global_id(1), c = get_group_id(0), chunks = get_num_groups(0);
    const IDX me = c * WG + lid, items = chunks * WG;
    IDX ox = 0, oy = 0, oo = 0;
    if (nd > 0) batch_offsets3(o, nd, shape, batch_x, batch_y, batch_out, &ox, &oy, &oo);
    __global const T* xp = x + x_off + ox;
    __global const T* yp = y + y_off + oy;
    ITEM it;
    ITEM_INIT(it);
    IDX j0 = 0;
#if VW > 1
    // Unit strides, aligned starts: whole runs as vectors, then the tail (< VW elements) element by element.
    const IDX runs = len / VW;
    __global const VT* xv = (__global const VT*)xp;
    __global const VT* yv = (__global const VT*)yp;
    // Two runs per iteration, both loaded before either is used: more bytes in flight per work-item.
    IDX j = me;
    for (; j + items < runs; j += 2 * items) {
        Run a0, a1, b0, b1;
        a0.v = xv[j];
        a1.v = xv[j + items];
#if OP_NORM
        b0.v = a0.v;
        b1.v = a1.v;
#else
        b0.v = yv[j];
        b1.v = yv[j + items];
#endif
        #pragma unroll
        for (int k = 0; k < VW; ++k) ITEM_ADD(it, a0.s[k], b0.s[k]);
        #pragma unroll
        for (int k = 0; k < VW; ++k) ITEM_ADD(it, a1.s[k], b1.s[k]);
    }
    if (j < runs) {
        Run a, b;
        a.v = xv[j];
#if OP_NORM
        b.v = a.v;
#else
        b.v = yv[j];
#endif
        #pragma unroll
        for (int k = 0; k < VW; ++k) ITEM_ADD(it, a.s[k], b.s[k]);
    }
    j0 = runs * VW;
#endif
    for (IDX j = j0 + me; j < len; j += items) ITEM_ADD(it, xp[j * sx], yp[j * sy]);
    scratch[lid] = ITEM_PARTIAL(it);
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

#else
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
    ITEM it;
    ITEM_INIT(it);
    for (IDX j = 0; j < len; j++) ITEM_ADD(it, xp[j * sx], yp[j * sy]);
    out[out_off + oo] = ACC_FINAL(ITEM_PARTIAL(it));
}
#endif

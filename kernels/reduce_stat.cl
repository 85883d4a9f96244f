// numpy's reductions of real data (Statistic): sum, prod, min, max, mean, var, std, argmin, argmax over any set
// of axes, in two passes with no atomics. Pass 1 (stat_chunks): work-item g = o·chunks + c reduces chunk c of
// output o's elements (a range of the flattened reduced axes) to a state; pass 2 (stat_merge): work-item o merges
// its chunks' states in order and writes the value. Neighbouring outputs are neighbouring work-items, so a
// reduction along a slow axis reads neighbouring elements together. Build options (besides common.cl's):
//   STAT  1 sum, 2 prod, 3 min, 4 max, 5 mean, 6 var, 7 std, 8 argmin, 9 argmax
//   OUT   the result's type (T; double for the indices of argmin/argmax)
// A state is two reals (a, b) and a count or index (i): sum/prod/mean a = the running value; min/max a = the
// value, i = the count; var/std (per chunk from shifted sums, merged by Chan's rule) a = the mean, b = M2,
// i = the count;
// argmin/argmax a = the value, i = its index in the flattened reduction, NO_INDEX while empty. NaN propagates as
// numpy's does: min/max give NaN, argmin/argmax the first NaN's index, sums and moments NaN.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define NO_INDEX ((ulong)-1)
#define IS_ARG (STAT == 8 || STAT == 9)
#define IS_MOMENT (STAT == 6 || STAT == 7)

#if STAT == 3 || STAT == 8
#define BEATS(v, a) ((v) < (a))
#else
#define BEATS(v, a) ((v) > (a))
#endif

typedef struct {
    R a, b;
    ulong i;
} State;

inline State state_empty(void) {
    State s;
    s.a = (STAT == 2) ? (R)1 : (R)0;
    s.b = 0;
    s.i = IS_ARG ? NO_INDEX : 0;
    return s;
}

// One more element v, at index j of the flattened reduction (elements come in increasing j).
inline State state_add(State s, R v, ulong j) {
#if STAT == 1 || STAT == 5
    s.a += v;
#elif STAT == 2
    s.a *= v;
#elif STAT == 3 || STAT == 4
    if (s.i == 0 || (!isnan(s.a) && (isnan(v) || BEATS(v, s.a)))) s.a = v;
    s.i += 1;
#elif IS_MOMENT
    s.i += 1;
    const R d = v - s.a;
    s.a += d / (R)s.i;
    s.b += d * (v - s.a);
#else
    if (s.i == NO_INDEX || (!isnan(s.a) && (isnan(v) || BEATS(v, s.a)))) {
        s.a = v;
        s.i = j;
    }
#endif
    return s;
}

// s then t (t's elements all come after s's).
inline State state_merge(State s, State t) {
#if STAT == 1 || STAT == 5
    s.a += t.a;
#elif STAT == 2
    s.a *= t.a;
#elif STAT == 3 || STAT == 4
    if (t.i > 0 && (s.i == 0 || (!isnan(s.a) && (isnan(t.a) || BEATS(t.a, s.a))))) s.a = t.a;
    s.i += t.i;
#elif IS_MOMENT
    if (t.i > 0) {
        const ulong n = s.i + t.i;
        const R d = t.a - s.a;
        const R wt = (R)t.i / (R)n;
        s.a += d * wt;
        s.b += t.b + d * d * (R)s.i * wt;
        s.i = n;
    }
#else
    if (t.i != NO_INDEX && (s.i == NO_INDEX || (!isnan(s.a) && (isnan(t.a) || BEATS(t.a, s.a))))) s = t;
#endif
    return s;
}

inline OUT state_value(State s, ulong len, R ddof) {
#if STAT == 5
    return (OUT)(s.a / (R)len);
#elif IS_MOMENT
    // numpy: M2 / max(n − ddof, 0), NaN for no elements.
    const R var = (s.i == 0) ? (R)NAN : s.b / fmax((R)s.i - ddof, (R)0);
#if STAT == 7
    return (OUT)sqrt(var);
#else
    return (OUT)var;
#endif
#elif IS_ARG
    return (OUT)s.i;
#else
    return (OUT)s.a;
#endif
}

// The state of `count` elements read from `p` by `step` (the flattened reduction's indices from j0). Moments use the
// shifted-data sums Σ(v − K), Σ(v − K)² with K the first element (no division per element, stable while K is
// a sample of the data), turned into Welford's (mean, M2) once at the end.
#define CHUNK_LOOP(LOAD) \
    do { \
        if (IS_MOMENT) { \
            R k = 0, s1 = 0, s2 = 0; \
            for (IDX n = 0; n < count; ++n) { \
                LOAD(n, v); \
                if (n == 0) k = v; \
                const R d = v - k; \
                s1 += d; \
                s2 += d * d; \
            } \
            if (count > 0) { \
                s.i = count; \
                s.a = k + s1 / (R)count; \
                s.b = fmax(s2 - s1 * s1 / (R)count, (R)0); \
                if (isnan(s2)) s.b = s2; \
            } \
        } else { \
            for (IDX n = 0; n < count; ++n) { \
                LOAD(n, v); \
                s = state_add(s, v, (ulong)(j0 + n)); \
            } \
        } \
    } while (0)

kernel void stat_chunks(global const T* restrict x, IDX x0, uint knd, ulong8 kshape, ulong8 kstride, uint rnd,
                        ulong8 rshape, ulong8 rstride, IDX len, IDX chunk, IDX chunks, IDX states,
                        global R* restrict sv, global ulong* restrict si) {
    for (IDX g = get_global_id(0); g < states; g += get_global_size(0)) {
        const IDX o = g / chunks, c = g - o * chunks;
        IDX ko = 0, unused = 0;
        if (knd > 0) batch_offsets(o, knd, kshape, kstride, kstride, &ko, &unused);
        State s = state_empty();
        const IDX j0 = min(len, c * chunk), count = min(len, j0 + chunk) - j0;
        if (rnd <= 1) {
            // One reduced axis after merging (every axis of a contiguous array, or one axis): a pointer walk.
            const IDX step = (IDX)rstride.s0;
            global const T* p = x + x0 + ko + j0 * step;
#define LOAD_WALK(n, v) const R v = p[(n) * step]
            CHUNK_LOOP(LOAD_WALK);
        } else {
            // Several reduced axes: each element's offset from its multi-index.
#define LOAD_GATHER(n, v) \
    IDX ro_ = 0, unused_ = 0; \
    batch_offsets(j0 + (n), rnd, rshape, rstride, rstride, &ro_, &unused_); \
    const R v = x[x0 + ko + ro_]
            CHUNK_LOOP(LOAD_GATHER);
        }
        sv[2 * g] = s.a;
        sv[2 * g + 1] = s.b;
        si[g] = s.i;
    }
}

#ifdef GROUP_SIZE
// When each output's elements are one walk (a single reduced axis after merging — a contiguous row, or the whole
// array): work-group g = o·chunks + c reduces chunk c of output o together. Work-item t takes the chunk's elements
// t, t + GROUP_SIZE, …, so neighbouring work-items read neighbouring addresses (coalesced on GPUs, whole vectors
// on CPUs), and the group's states merge pairwise through local memory. Not for argmin/argmax, whose merge needs
// its states in the elements' order.
// Its arguments are stat_chunks' (rnd and rshape unread: one reduced axis).
kernel void stat_group(global const T* restrict x, IDX x0, uint knd, ulong8 kshape, ulong8 kstride, uint rnd,
                       ulong8 rshape, ulong8 rstride, IDX len, IDX chunk, IDX chunks, IDX states,
                       global R* restrict sv, global ulong* restrict si) {
    local R la[GROUP_SIZE], lb[GROUP_SIZE];
    local ulong li[GROUP_SIZE];
    const IDX t = get_local_id(0);
    const IDX step = (IDX)rstride.s0;
    for (IDX g = get_group_id(0); g < states; g += get_num_groups(0)) {
        const IDX o = g / chunks, c = g - o * chunks;
        IDX ko = 0, unused = 0;
        if (knd > 0) batch_offsets(o, knd, kshape, kstride, kstride, &ko, &unused);
        const IDX j0 = min(len, c * chunk), end = min(len, j0 + chunk);
        const IDX first = j0 + t;
        const IDX count = first < end ? (end - first + GROUP_SIZE - 1) / GROUP_SIZE : 0;
        global const T* p = x + x0 + ko + first * step;
        State s = state_empty();
#define LOAD_STRIDED(n, v) const R v = p[(n) * GROUP_SIZE * step]
        CHUNK_LOOP(LOAD_STRIDED);
        la[t] = s.a;
        lb[t] = s.b;
        li[t] = s.i;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (IDX span = GROUP_SIZE / 2; span > 0; span >>= 1) {
            if (t < span) {
                State a, b;
                a.a = la[t];
                a.b = lb[t];
                a.i = li[t];
                b.a = la[t + span];
                b.b = lb[t + span];
                b.i = li[t + span];
                a = state_merge(a, b);
                la[t] = a.a;
                lb[t] = a.b;
                li[t] = a.i;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (t == 0) {
            sv[2 * g] = la[0];
            sv[2 * g + 1] = lb[0];
            si[g] = li[0];
        }
        // The next chunk reuses the local arrays.
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
#endif

kernel void stat_merge(global const R* restrict sv, global const ulong* restrict si, IDX chunks, IDX outputs,
                       IDX len, R ddof, global OUT* restrict out, IDX o0) {
    for (IDX o = get_global_id(0); o < outputs; o += get_global_size(0)) {
        State s = state_empty();
        for (IDX c = 0; c < chunks; ++c) {
            const IDX g = o * chunks + c;
            State t;
            t.a = sv[2 * g];
            t.b = sv[2 * g + 1];
            t.i = si[g];
            s = state_merge(s, t);
        }
        out[o0 + o] = state_value(s, (ulong)len, ddof);
    }
}

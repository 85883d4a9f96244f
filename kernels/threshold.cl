// Histograms for the threshold searches (the threshold family, ThresholdValue): a range pass (min, max and the
// count of non-finite values, per work-group), a one-group pass merging those into the header and clearing the
// counts, then a binning pass that counts each value into its bin. Prepended by common.cl; T is float or double,
// IDX the index type.
// The bins follow numpy.histogram (scikit-image's float rule): `nbins` uniform bins over [min, max] (±0.5 when
// they are equal) whose edges are numpy.linspace's, computed in T as numpy does (k·step + first, the last edge
// `last` itself), a first guess from the scaled value and one step of correction against those edges, so a
// value lands where numpy puts it whatever the rounding of the guess. Contraction into fma is off so the edges
// round as numpy's do. With `integers` set (scikit-image's rule for integer images) bin k holds the value
// min + k.
//
// Speed: each work-group reads one contiguous block of the image (`block` elements; its work-items step through
// it HIST_LOCAL apart, so neighbours read neighbours) and counts into a histogram in local memory, added to the
// global counts with one atomic per non-empty bin at the end. Global atomics of every value on a few hundred
// counters serialise on any device (266 ms for 8192² floats on an H200, where reading them takes 0.1 ms). The
// host sets, through build options:
//   HIST_LOCAL   work-items of a group, a power of two (1 on CPUs: PoCL runs a group's items in turn, so one item
//                per group reads a contiguous stretch, and its histogram needs no atomics)
//   HIST_COPIES  copies of the local histogram, interleaved (bin k of copy c at k·HIST_COPIES + c) and taken by
//                work-item lid % HIST_COPIES: on a GPU the 32 lanes of a warp that hit one bin then hit 32
//                addresses in 32 banks, instead of one address 32 times
//   LOCAL_BINS   the bins the local histogram holds (all of them unless 65536 do not fit); higher bins are
//                counted by global atomics, as they are rare in the images that have them (16-bit scans whose
//                values crowd the bottom of their range)

#if HIST_LOCAL == 1
#define COUNT_LOCAL(slot) ((slot) += 1)
#else
#define COUNT_LOCAL(slot) atomic_inc(&(slot))
#endif

// HIST_VECTOR > 1 (CPUs, with HIST_LOCAL 1): the passes read their block HIST_VECTOR values at a time as OpenCL
// vectors, which PoCL compiles to SIMD code, and compute their tests and bins lane by lane with vector masks
// (−1 where true); the tail of a block goes one value at a time. VT is T's vector, VI the integer vector its
// comparisons give (int for float, long for double) and VK that integer.
#ifndef HIST_VECTOR
#define HIST_VECTOR 1
#endif
#if HIST_VECTOR > 1
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define VT CAT(T, HIST_VECTOR)
#if IS_DOUBLE
#define VK long
#else
#define VK int
#endif
#define VI CAT(VK, HIST_VECTOR)
#define VLOAD CAT(vload, HIST_VECTOR)
#define VSTORE CAT(vstore, HIST_VECTOR)
#define TO_VI CAT(convert_, VI)
#define TO_VT CAT(convert_, VT)
// The lanes of `vec` (of element type `type`) folded into `out` by `fold`, in lane order.
#define LANES_FOLD(vec, type, fold, out)                                                                               \
    do {                                                                                                               \
        type lanes_[HIST_VECTOR];                                                                                      \
        VSTORE(vec, 0, lanes_);                                                                                        \
        for (int c_ = 0; c_ < HIST_VECTOR; c_++) out = fold(out, lanes_[c_]);                                          \
    } while (0)
#define LANE_ADD(a, b) ((a) + (b))
#endif

// The first element of this group's block and the end of it.
inline void hist_block(IDX n, IDX block, IDX* start, IDX* end) {
    *start = (IDX)get_group_id(0) * block;
    *end = min(*start + block, n);
}

// The work-group's minimum, maximum and non-finite count from each item's: a tree in local memory, left in
// lo[0], hi[0] and bad[0] (every item of the group calls it: it holds barriers).
inline void group_range(local T *lo, local T *hi, local T *bad, uint lid, T mn, T mx, T nonfinite) {
    lo[lid] = mn;
    hi[lid] = mx;
    bad[lid] = nonfinite;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = HIST_LOCAL / 2; s > 0; s >>= 1) {
        if (lid < s) {
            lo[lid] = fmin(lo[lid], lo[lid + s]);
            hi[lid] = fmax(hi[lid], hi[lid + s]);
            bad[lid] += bad[lid + s];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

kernel void hist_range(global const T* restrict x, IDX x_off, IDX n, IDX block, global T* restrict partials) {
    local T lo[HIST_LOCAL], hi[HIST_LOCAL], bad[HIST_LOCAL];
    const uint lid = get_local_id(0);
    IDX start, end;
    hist_block(n, block, &start, &end);
    T mn = INFINITY, mx = -INFINITY, nonfinite = 0;
    IDX i = start + lid;
#if HIST_VECTOR > 1
    VT vmn = (VT)(INFINITY), vmx = (VT)(-INFINITY);
    VI vfinite = (VI)(0);
    for (; i + HIST_VECTOR <= end; i += HIST_VECTOR) {
        const VT v = VLOAD(0, x + x_off + i);
        const VI ok = isfinite(v);
        vmn = fmin(vmn, select((VT)(INFINITY), v, ok));
        vmx = fmax(vmx, select((VT)(-INFINITY), v, ok));
        vfinite -= ok;
    }
    IDX finite = 0;
    LANES_FOLD(vmn, T, fmin, mn);
    LANES_FOLD(vmx, T, fmax, mx);
    LANES_FOLD(vfinite, VK, LANE_ADD, finite);
    nonfinite = (T)((i - start) - finite);
#endif
    for (; i < end; i += HIST_LOCAL) {
        const T v = x[x_off + i];
        if (isfinite(v)) {
            mn = fmin(mn, v);
            mx = fmax(mx, v);
        } else {
            nonfinite += 1;
        }
    }
    group_range(lo, hi, bad, lid, mn, mx, nonfinite);
    if (lid == 0) {
        const size_t g = get_group_id(0);
        partials[3 * g] = lo[0];
        partials[3 * g + 1] = hi[0];
        partials[3 * g + 2] = bad[0];
    }
}

// One work-group: the groups' partials into header = [min, max, the first element, the count of non-finite
// values] (what the binning pass and the host's search read), and the counts cleared.
kernel void hist_range_merge(global const T* restrict partials, uint groups, global const T* restrict x, IDX x_off,
                             global T* restrict header, global uint* restrict counts, uint nbins) {
    local T lo[HIST_LOCAL], hi[HIST_LOCAL], bad[HIST_LOCAL];
    const uint lid = get_local_id(0);
    T mn = INFINITY, mx = -INFINITY, nonfinite = 0;
    for (uint g = lid; g < groups; g += HIST_LOCAL) {
        mn = fmin(mn, partials[3 * g]);
        mx = fmax(mx, partials[3 * g + 1]);
        nonfinite += partials[3 * g + 2];
    }
    group_range(lo, hi, bad, lid, mn, mx, nonfinite);
    if (lid == 0) {
        header[0] = lo[0];
        header[1] = hi[0];
        header[2] = x[x_off];
        header[3] = bad[0];
    }
    for (uint k = lid; k < nbins; k += HIST_LOCAL) counts[k] = 0;
}

// numpy.linspace(first, last, nbins + 1)[k] in T.
inline T hist_edge(long k, T first, T last, T step, uint nbins) {
#pragma OPENCL FP_CONTRACT OFF
    return k >= (long)nbins ? last : (T)k * step + first;
}

// The bin numpy.histogram gives v (first <= v <= last).
inline uint uniform_bin(T v, T first, T last, uint nbins) {
#pragma OPENCL FP_CONTRACT OFF
    const T denom = last - first;
    const T step = denom / (T)nbins;
    long k = (long)(((v - first) / denom) * (T)nbins);
    k = clamp(k, (long)0, (long)nbins - 1);
    if (k > 0 && v < hist_edge(k, first, last, step, nbins)) k -= 1;
    if (k + 1 < (long)nbins && v >= hist_edge(k + 1, first, last, step, nbins)) k += 1;
    return (uint)k;
}

// Counts this group's block into its local histogram, then adds that to `counts` (cleared by hist_range_merge).
kernel void hist_bins(global const T* restrict x, IDX x_off, IDX n, IDX block, global const T* restrict header,
                      global uint* restrict counts, uint nbins, int integers) {
    local uint hist[LOCAL_BINS * HIST_COPIES];
    const uint lid = get_local_id(0);
    for (uint k = lid; k < LOCAL_BINS * HIST_COPIES; k += HIST_LOCAL) hist[k] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    const T mn = header[0];
    T first = mn, last = header[1];
    if (first == last) {
        first -= (T)0.5;
        last += (T)0.5;
    }
    const uint copy = lid % HIST_COPIES;
    IDX start, end;
    hist_block(n, block, &start, &end);
    IDX i = start + lid;
#if HIST_VECTOR > 1
    {
#pragma OPENCL FP_CONTRACT OFF
        // uniform_bin and the integer rule lane by lane; a lane that is not finite gets bin −1 (not counted)
        const T denom = last - first;
        const T step = denom / (T)nbins;
        const VI top = (VI)((VK)nbins - 1);
        for (; i + HIST_VECTOR <= end; i += HIST_VECTOR) {
            const VT v = VLOAD(0, x + x_off + i);
            VI k;
            if (integers) {
                const VT offset = v - mn;
                k = select((VI)((VK)nbins), TO_VI(offset), offset < (VT)((T)nbins));
            } else {
                k = clamp(TO_VI(((v - first) / denom) * (VT)((T)nbins)), (VI)(0), top);
                k += (k > (VI)(0)) & (v < TO_VT(k) * step + first);
                const VT upper = select(TO_VT(k + (VI)(1)) * step + first, (VT)(last), k + (VI)(1) >= (VI)((VK)nbins));
                k -= (k < top) & (v >= upper);
            }
            k = select(k, (VI)(-1), isfinite(v) == (VI)(0));
            VK bins[HIST_VECTOR];
            VSTORE(k, 0, bins);
            for (int c = 0; c < HIST_VECTOR; c++) {
                const VK b = bins[c];
                if (b >= 0 && b < LOCAL_BINS) {
                    COUNT_LOCAL(hist[b * HIST_COPIES + copy]);
                } else if (b >= 0 && b < (VK)nbins) {
                    atomic_inc(&counts[b]);
                }
            }
        }
    }
#endif
    for (; i < end; i += HIST_LOCAL) {
        const T v = x[x_off + i];
        if (!isfinite(v)) continue; // the host refuses the image
        // A value off the integer range is not counted: the host sees the total fall short and refuses.
        const T offset = v - mn;
        const uint k = integers ? (offset < (T)nbins ? (uint)offset : nbins) : uniform_bin(v, first, last, nbins);
        if (k < LOCAL_BINS) {
            COUNT_LOCAL(hist[k * HIST_COPIES + copy]);
        } else if (k < nbins) {
            atomic_inc(&counts[k]);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = lid; k < LOCAL_BINS; k += HIST_LOCAL) {
        uint total = 0;
        for (uint c = 0; c < HIST_COPIES; c++) total += hist[k * HIST_COPIES + c];
        if (total > 0) atomic_add(&counts[k], total);
    }
}

// Li's minimum cross-entropy iteration (scikit-image's threshold_li on float images), one pass over the image per
// step, each group writing partials the host adds up in group order and turns into the next step. Its arithmetic
// follows numpy's: NaN values are left out, infinities too once the range is known, and every value is used as
// s = x − min in T (numpy's `image -= image_min`). Sums accumulate in LI_ACC (double where the device has it:
// numpy's float32 sums are pairwise, close to exact) and travel as two T (the T nearest and the rest), counts
// the same way, so the host gets them to ~48 bits whatever T is.
#if LI_FP64 && !IS_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#if LI_FP64
#define LI_ACC double
#else
#define LI_ACC float
#endif
#if HIST_VECTOR > 1
#define VA CAT(LI_ACC, HIST_VECTOR)
#define TO_VA CAT(convert_, VA)
#endif

// v as the pair (the T nearest v, what is left) at p[0], p[1].
inline void li_put(global T* p, LI_ACC v) {
    const T hi = (T)v;
    p[0] = hi;
    p[1] = (T)(v - (LI_ACC)hi);
}

inline void li_put_count(global T* p, ulong c) {
    const T hi = (T)c;
    p[0] = hi;
    p[1] = (T)((long)c - (long)hi);
}

// A tree sum of the group's values of `a` (left in a[0]); every item of the group calls it.
#define LI_GROUP_SUM(a, lid)                                                                                           \
    do {                                                                                                               \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                                  \
        for (uint s_ = HIST_LOCAL / 2; s_ > 0; s_ >>= 1) {                                                             \
            if ((lid) < s_) (a)[lid] += (a)[(lid) + s_];                                                               \
            barrier(CLK_LOCAL_MEM_FENCE);                                                                              \
        }                                                                                                              \
    } while (0)

// Per group: [min, max of the finite values, then counts (each a pair) of finite, NaN, +inf and −inf values].
kernel void li_range(global const T* restrict x, IDX x_off, IDX n, IDX block, global T* restrict partials) {
    local T lo[HIST_LOCAL], hi[HIST_LOCAL];
    local ulong finite[HIST_LOCAL], nan_[HIST_LOCAL], pos[HIST_LOCAL], neg[HIST_LOCAL];
    const uint lid = get_local_id(0);
    IDX start, end;
    hist_block(n, block, &start, &end);
    T mn = INFINITY, mx = -INFINITY;
    ulong f = 0, q = 0, p = 0, m = 0;
    IDX i = start + lid;
#if HIST_VECTOR > 1
    VT vmn = (VT)(INFINITY), vmx = (VT)(-INFINITY);
    VI vf = (VI)(0), vq = (VI)(0), vp = (VI)(0), vm = (VI)(0);
    for (; i + HIST_VECTOR <= end; i += HIST_VECTOR) {
        const VT v = VLOAD(0, x + x_off + i);
        const VI ok = isfinite(v), infinite = isinf(v);
        vmn = fmin(vmn, select((VT)(INFINITY), v, ok));
        vmx = fmax(vmx, select((VT)(-INFINITY), v, ok));
        vf -= ok;
        vq -= isnan(v);
        vp -= infinite & (v > (VT)(0));
        vm -= infinite & (v < (VT)(0));
    }
    LANES_FOLD(vmn, T, fmin, mn);
    LANES_FOLD(vmx, T, fmax, mx);
    LANES_FOLD(vf, VK, LANE_ADD, f);
    LANES_FOLD(vq, VK, LANE_ADD, q);
    LANES_FOLD(vp, VK, LANE_ADD, p);
    LANES_FOLD(vm, VK, LANE_ADD, m);
#endif
    for (; i < end; i += HIST_LOCAL) {
        const T v = x[x_off + i];
        if (isfinite(v)) {
            mn = fmin(mn, v);
            mx = fmax(mx, v);
            f += 1;
        } else if (isnan(v)) {
            q += 1;
        } else if (v > 0) {
            p += 1;
        } else {
            m += 1;
        }
    }
    lo[lid] = mn;
    hi[lid] = mx;
    finite[lid] = f;
    nan_[lid] = q;
    pos[lid] = p;
    neg[lid] = m;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = HIST_LOCAL / 2; s > 0; s >>= 1) {
        if (lid < s) {
            lo[lid] = fmin(lo[lid], lo[lid + s]);
            hi[lid] = fmax(hi[lid], hi[lid + s]);
            finite[lid] += finite[lid + s];
            nan_[lid] += nan_[lid + s];
            pos[lid] += pos[lid + s];
            neg[lid] += neg[lid + s];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        global T* out = partials + 10 * get_group_id(0);
        out[0] = lo[0];
        out[1] = hi[0];
        li_put_count(out + 2, finite[0]);
        li_put_count(out + 4, nan_[0]);
        li_put_count(out + 6, pos[0]);
        li_put_count(out + 8, neg[0]);
    }
}

// Per group: [the sum of s = x − mn over the finite values (a pair), the least non-zero |s[i+1] − s[i]| of finite
// neighbours in the block]: the mean starts the iteration; the least difference bounds scikit-image's default
// tolerance (half the least gap between distinct values) from above, so the host knows when it must compute it.
kernel void li_mean(global const T* restrict x, IDX x_off, IDX n, IDX block, T mn, global T* restrict partials) {
    local LI_ACC sums[HIST_LOCAL];
    local T gaps[HIST_LOCAL];
    const uint lid = get_local_id(0);
    IDX start, end;
    hist_block(n, block, &start, &end);
    LI_ACC sum = 0;
    T gap = INFINITY;
    IDX i = start + lid;
#if HIST_VECTOR > 1
    VA vsum = (VA)(0);
    VT vgap = (VT)(INFINITY);
    // strictly before the end: the last lane's neighbour is read too
    for (; i + HIST_VECTOR < end; i += HIST_VECTOR) {
        const VT v = VLOAD(0, x + x_off + i);
        const VT w = VLOAD(0, x + x_off + i + 1);
        const VI ok = isfinite(v);
        const VT s = v - (VT)(mn);
        vsum += TO_VA(select((VT)(0), s, ok));
        const VT d = fabs((w - (VT)(mn)) - s);
        vgap = fmin(vgap, select((VT)(INFINITY), d, ok & isfinite(w) & (d > (VT)(0))));
    }
    LANES_FOLD(vsum, LI_ACC, LANE_ADD, sum);
    LANES_FOLD(vgap, T, fmin, gap);
#endif
    for (; i < end; i += HIST_LOCAL) {
        const T v = x[x_off + i];
        if (!isfinite(v)) continue;
        const T s = v - mn;
        sum += (LI_ACC)s;
        if (i + 1 < end) {
            const T w = x[x_off + i + 1];
            const T d = fabs((w - mn) - s);
            if (isfinite(w) && d > 0) gap = fmin(gap, d);
        }
    }
    sums[lid] = sum;
    gaps[lid] = gap;
    LI_GROUP_SUM(sums, lid);
    for (uint s = HIST_LOCAL / 2; s > 0; s >>= 1) {
        if (lid < s) gaps[lid] = fmin(gaps[lid], gaps[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        global T* out = partials + 3 * get_group_id(0);
        li_put(out, sums[0]);
        out[2] = gaps[0];
    }
}

// Per group, with s = x − mn over the finite values: [the sum of s above t, the sum of the others, how many lie
// above t], each a pair: numpy's image[image > t] and image[~(image > t)].
kernel void li_split(global const T* restrict x, IDX x_off, IDX n, IDX block, T mn, T t, global T* restrict partials) {
    local LI_ACC above[HIST_LOCAL], below[HIST_LOCAL];
    local ulong count[HIST_LOCAL];
    const uint lid = get_local_id(0);
    IDX start, end;
    hist_block(n, block, &start, &end);
    LI_ACC up = 0, down = 0;
    ulong c = 0;
    IDX i = start + lid;
#if HIST_VECTOR > 1
    VA vup = (VA)(0), vdown = (VA)(0);
    VI vc = (VI)(0);
    for (; i + HIST_VECTOR <= end; i += HIST_VECTOR) {
        const VT v = VLOAD(0, x + x_off + i);
        // a lane that is not finite adds 0 to the sum below and counts above in no lane
        const VT s = select((VT)(0), v - (VT)(mn), isfinite(v));
        const VI upper = isfinite(v) & (s > (VT)(t));
        vup += TO_VA(select((VT)(0), s, upper));
        vdown += TO_VA(select(s, (VT)(0), upper));
        vc -= upper;
    }
    LANES_FOLD(vup, LI_ACC, LANE_ADD, up);
    LANES_FOLD(vdown, LI_ACC, LANE_ADD, down);
    LANES_FOLD(vc, VK, LANE_ADD, c);
#endif
    for (; i < end; i += HIST_LOCAL) {
        const T v = x[x_off + i];
        if (!isfinite(v)) continue;
        const T s = v - mn;
        if (s > t) {
            up += (LI_ACC)s;
            c += 1;
        } else {
            down += (LI_ACC)s;
        }
    }
    above[lid] = up;
    below[lid] = down;
    count[lid] = c;
    LI_GROUP_SUM(above, lid);
    LI_GROUP_SUM(below, lid);
    LI_GROUP_SUM(count, lid);
    if (lid == 0) {
        global T* out = partials + 6 * get_group_id(0);
        li_put(out, above[0]);
        li_put(out + 2, below[0]);
        li_put_count(out + 4, count[0]);
    }
}

// Li's threshold, found by the host, into the output.
kernel void li_result(global T* restrict y, IDX y_off, T value) {
    if (get_global_id(0) == 0) y[y_off] = value;
}

// The thresholds the host wrote after the header, into the output (its k elements from y_off on).
kernel void hist_results(global const T* restrict header, global T* restrict y, IDX y_off, uint k) {
    const uint i = get_global_id(0);
    if (i < k) y[y_off + i] = header[4 + i];
}

// y = above where x > t[0] (the threshold a search wrote), else below: `image > threshold_otsu(image)`.
// Each group one contiguous block, as the histogram passes (a grid-stride loop sends each of PoCL's work-items
// through the whole image a page apart: 919 ms against 31 for 8192² floats on the 2-core PoCL).
kernel void threshold_mask(global const T* restrict x, IDX x_off, IDX n, IDX block, global const T* restrict t,
                           IDX t_off, global T* restrict y, IDX y_off, T above, T below) {
    const T threshold = t[t_off];
    IDX start, end;
    hist_block(n, block, &start, &end);
    IDX i = start + get_local_id(0);
#if HIST_VECTOR > 1
    for (; i + HIST_VECTOR <= end; i += HIST_VECTOR) {
        const VT v = VLOAD(0, x + x_off + i);
        VSTORE(select((VT)(below), (VT)(above), v > (VT)(threshold)), 0, y + y_off + i);
    }
#endif
    for (; i < end; i += HIST_LOCAL) y[y_off + i] = x[x_off + i] > threshold ? above : below;
}

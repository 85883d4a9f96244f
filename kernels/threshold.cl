// Histograms for the threshold searches (the threshold family, ThresholdValue): a range pass (min, max and the
// count of non-finite values, per work-group), then a binning pass that counts each value into its bin with an
// atomic increment. Prepended by common.cl; T is float or double, IDX the index type.
// The bins follow numpy.histogram (scikit-image's float rule): `nbins` uniform bins over [min, max] (±0.5 when
// they are equal) whose edges are numpy.linspace's, computed in T as numpy does (k·step + first, the last edge
// `last` itself), a first guess from the scaled value and one step of correction against those edges, so a
// value lands where numpy puts it whatever the rounding of the guess. Contraction into fma is off so the edges
// round as numpy's do. With `integers` set (scikit-image's rule for integer images) bin k holds the value
// min + k.

#define HIST_GROUP 64

kernel void hist_range(global const T* restrict x, IDX x_off, IDX n, global T* restrict partials) {
    local T lo[HIST_GROUP], hi[HIST_GROUP], bad[HIST_GROUP];
    const uint lid = get_local_id(0);
    T mn = INFINITY, mx = -INFINITY, nonfinite = 0;
    for (IDX i = get_global_id(0); i < n; i += get_global_size(0)) {
        const T v = x[x_off + i];
        if (isfinite(v)) {
            mn = fmin(mn, v);
            mx = fmax(mx, v);
        } else {
            nonfinite += 1;
        }
    }
    lo[lid] = mn;
    hi[lid] = mx;
    bad[lid] = nonfinite;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = HIST_GROUP / 2; s > 0; s >>= 1) {
        if (lid < s) {
            lo[lid] = fmin(lo[lid], lo[lid + s]);
            hi[lid] = fmax(hi[lid], hi[lid + s]);
            bad[lid] += bad[lid + s];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        const size_t g = get_group_id(0);
        partials[3 * g] = lo[0];
        partials[3 * g + 1] = hi[0];
        partials[3 * g + 2] = bad[0];
    }
}

kernel void hist_clear(global uint* restrict counts, uint nbins) {
    const uint k = get_global_id(0);
    if (k < nbins) counts[k] = 0;
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

// header: [min, max, the first element, the count of non-finite values] for the host's search.
kernel void hist_bins(global const T* restrict x, IDX x_off, IDX n, global const T* restrict partials, uint groups,
                      global uint* restrict counts, uint nbins, int integers, global T* restrict header) {
    local T range[2];
    if (get_local_id(0) == 0) {
        T mn = INFINITY, mx = -INFINITY, nonfinite = 0;
        for (uint g = 0; g < groups; g++) {
            mn = fmin(mn, partials[3 * g]);
            mx = fmax(mx, partials[3 * g + 1]);
            nonfinite += partials[3 * g + 2];
        }
        range[0] = mn;
        range[1] = mx;
        if (get_group_id(0) == 0) {
            header[0] = mn;
            header[1] = mx;
            header[2] = n > 0 ? x[x_off] : (T)0;
            header[3] = nonfinite;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const T mn = range[0];
    T first = mn, last = range[1];
    if (first == last) {
        first -= (T)0.5;
        last += (T)0.5;
    }
    for (IDX i = get_global_id(0); i < n; i += get_global_size(0)) {
        const T v = x[x_off + i];
        if (!isfinite(v)) continue; // the host refuses the image
        // A value off the integer range is not counted: the host sees the total fall short and refuses.
        const T offset = v - mn;
        const uint k = integers ? (offset < (T)nbins ? (uint)offset : nbins) : uniform_bin(v, first, last, nbins);
        if (k < nbins) atomic_inc(&counts[k]);
    }
}

// The thresholds the host wrote after the header, into the output (its k elements from y_off on).
kernel void hist_results(global const T* restrict header, global T* restrict y, IDX y_off, uint k) {
    const uint i = get_global_id(0);
    if (i < k) y[y_off + i] = header[4 + i];
}

// y = above where x > t[0] (the threshold a search wrote), else below: `image > threshold_otsu(image)`.
kernel void threshold_mask(global const T* restrict x, IDX x_off, IDX n, global const T* restrict t, IDX t_off,
                           global T* restrict y, IDX y_off, T above, T below) {
    const T threshold = t[t_off];
    for (IDX i = get_global_id(0); i < n; i += get_global_size(0)) y[y_off + i] = x[x_off + i] > threshold ? above : below;
}

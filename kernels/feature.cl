// The feature family's kernels (src/process/feature/peaks.rs): peak_local_max's candidates.

// `list` begins with 8 bytes of head — the candidates' count and a "not flat" flag, two uints — and then holds
// the candidates; HEAD is the number of T those bytes take.
#define HEAD (8 / (int)sizeof(T))

// Clears the head before a search.
kernel void peak_head_clear(global T* list) {
    global uint* head = (global uint*)list;
    head[0] = 0;
    head[1] = 0;
}

// One work-item per element i of the image x (n elements, row-major, extents n0 × n1 × n2): a candidate when x
// equals its window's maximum m (any value, for a one-element window), is above the threshold and lies outside
// the border (w0, w1, w2 elements from either end of each axis). The threshold is skimage's, in T as numpy computes
// it: threshold_abs (else the image's minimum lo[0], NaN when it holds one), raised to threshold_rel · hi[0] when
// that is greater (Python's max keeps the first unless the second is greater). Candidates are appended to `list`
// after the head as (i / 2^24, i mod 2^24, x) — numbers every T holds exactly — in whatever order the atomic count in head[0]
// gives: the host sorts them into skimage's. The flag becomes 1 when some element is not its window's maximum
// (else the image is flat, and skimage finds no peak).
kernel void peak_candidates(global const T* x, ulong x_off, global const T* m, ulong m_off, global const T* lo,
                            global const T* hi, global T* list, ulong n, ulong n0, ulong n1, ulong n2,
                            ulong w0, ulong w1, ulong w2, int single, int has_abs, T abs_t, int has_rel, T rel_t) {
    const ulong i = get_global_id(0);
    if (i >= n) return;
    global volatile uint* head = (global volatile uint*)list;
    global T* entries = list + HEAD;
    const T v = x[x_off + i];
    const int is_max = single || v == m[m_off + i];
    if (!is_max && head[1] == 0) head[1] = 1;
    T t = has_abs ? abs_t : lo[0];
    if (has_rel) {
        const T scaled = rel_t * hi[0];
        if (scaled > t) t = scaled;
    }
    if (!is_max || !(v > t)) return;
    const ulong c2 = i % n2, c1 = (i / n2) % n1, c0 = i / (n1 * n2);
    if ((w0 && (c0 < w0 || c0 + w0 >= n0)) || (w1 && (c1 < w1 || c1 + w1 >= n1)) ||
        (w2 && (c2 < w2 || c2 + w2 >= n2)))
        return;
    const ulong k = atomic_inc(&head[0]);
    entries[3 * k] = (T)(i >> 24);
    entries[3 * k + 1] = (T)(i & 0xFFFFFF);
    entries[3 * k + 2] = v;
}

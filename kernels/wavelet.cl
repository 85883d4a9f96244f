// Wavelet transforms (the wavelet family: Wavelet) and their helpers for ℓ1-wavelet reconstruction: one level of
// the Daubechies-2 analysis or synthesis along one axis of a band stored contiguously as [outer, n, inner], the
// soft threshold, and a circular shift. Every band sits at an offset in its buffer.
//
// The analysis of an axis of n samples gives m = (n + 3) / 2 low and high coefficients (pywt.dwt(x, "db2",
// mode="symmetric"), BART's dau2): band[j] = Σ_k h[k] · x̃[2j + 1 − k], where x̃ extends x half-sample
// symmetrically (x̃[−1] = x[0], x̃[n] = x[n − 1]).

constant R DB2_H0[4] = {-0.12940952255126037, 0.2241438680420134, 0.8365163037378079, 0.48296291314453416};
constant R DB2_H1[4] = {-0.48296291314453416, 0.8365163037378079, -0.2241438680420134, -0.12940952255126037};
constant R DB2_G0[4] = {0.48296291314453416, 0.8365163037378079, 0.2241438680420134, -0.12940952255126037};
constant R DB2_G1[4] = {-0.12940952255126037, -0.2241438680420134, 0.8365163037378079, -0.48296291314453416};

// The index of x̃[p] in x[0, n): half-sample symmetric extension (repeated for p far outside).
inline long symmetric_index(long p, long n) {
    while (p < 0 || p >= n) {
        if (p < 0) p = -p - 1;
        if (p >= n) p = 2 * n - 1 - p;
    }
    return p;
}

// lo, hi [outer, m, inner] from in [outer, n, inner].
kernel void wavelet_analysis(global const T* in, IDX in0, global T* lo, IDX lo0, global T* hi, IDX hi0, IDX outer,
                             IDX n, IDX inner, IDX m) {
    const IDX count = outer * m * inner;
    for (IDX g = get_global_id(0); g < count; g += get_global_size(0)) {
        const IDX i = g % inner, j = (g / inner) % m, o = g / (inner * m);
        global const T* x = in + in0 + o * n * inner + i;
        T l = ZERO, h = ZERO;
        for (int k = 0; k < 4; k++) {
            const T v = x[symmetric_index((long)(2 * j + 1) - k, (long)n) * inner];
            l += DB2_H0[k] * v;
            h += DB2_H1[k] * v;
        }
        lo[lo0 + g] = l;
        hi[hi0 + g] = h;
    }
}

// out [outer, n, inner] from lo, hi [outer, m, inner]: the synthesis that inverts the analysis exactly,
// out[i] = Σ_{k ≡ i (mod 2)} g0[k] · lo[(i − k)/2 + 1] + g1[k] · hi[(i − k)/2 + 1] over coefficients that exist.
kernel void wavelet_synthesis(global T* out, IDX out0, global const T* lo, IDX lo0, global const T* hi, IDX hi0,
                              IDX outer, IDX n, IDX inner, IDX m) {
    const IDX count = outer * n * inner;
    for (IDX g = get_global_id(0); g < count; g += get_global_size(0)) {
        const IDX i = g % inner, t = (g / inner) % n, o = g / (inner * n);
        const IDX base = o * m * inner + i;
        T acc = ZERO;
        for (int k = (int)(t % 2); k < 4; k += 2) {
            const long b = ((long)t - k) / 2 + 1;
            if (b >= 0 && b < (long)m) acc += DB2_G0[k] * lo[lo0 + base + b * inner] + DB2_G1[k] * hi[hi0 + base + b * inner];
        }
        out[out0 + g] = acc;
    }
}

// x ← x · max(|x| − θ, 0) / |x| (0 where |x| ≤ θ): the complex (or real) soft threshold.
kernel void soft_threshold(global T* x, R theta, IDX count) {
    for (IDX g = get_global_id(0); g < count; g += get_global_size(0)) {
        const T v = x[g];
#if IS_COMPLEX
        const R a = hypot(v.x, v.y);
#else
        const R a = fabs(v);
#endif
        x[g] = (a > theta) ? v * ((a - theta) / a) : ZERO;
    }
}

// out = in rolled circularly by s_d along each of three axes (numpy.roll: out[i] = in[i − s]), 0 ≤ s_d < n_d; each of
// `frames` images stored one after the other rolled on its own.
kernel void circular_shift(global const T* in, global T* out, IDX n0, IDX n1, IDX n2, IDX s0, IDX s1, IDX s2,
                           IDX frames) {
    const IDX cells = n0 * n1 * n2, count = cells * frames;
    for (IDX g = get_global_id(0); g < count; g += get_global_size(0)) {
        const IDX h = g % cells;
        const IDX i2 = h % n2, i1 = (h / n2) % n1, i0 = h / (n1 * n2);
        const IDX j0 = (i0 + n0 - s0) % n0, j1 = (i1 + n1 - s1) % n1, j2 = (i2 + n2 - s2) % n2;
        out[g] = in[(g - h) + (j0 * n1 + j1) * n2 + j2];
    }
}

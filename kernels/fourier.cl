// The Fourier filters (scipy.ndimage.fourier_gaussian, fourier_uniform, fourier_ellipsoid, fourier_shift): the
// input is a spectrum already, and each element is multiplied by the filter's transfer function at its frequency.
// The host defines, besides common.cl's T / R / IS_COMPLEX / IDX:
//   O, OR, O_COMPLEX  the output type (float, double, float2, double2), its real type, whether it is complex
//   FILTER        0 gaussian, 1 uniform, 2 ellipsoid, 3 shift
//   RANK          the input's number of axes (the ellipsoid's formula depends on it, as scipy's does)
// Per kept axis (extent > 1) `shape` holds the extent, `param` the filter's constant already divided by the length
// the frequencies refer to (scipy's `n` along the real transform's axis), and bit k of `halved` marks the axis of
// a real transform, whose indices are the frequencies 0, 1, … instead of numpy.fft.fftfreq's 0, 1, …, −1.
// The factor is computed in double whatever T is, as scipy computes it, and the product rounded once to O.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define FILTER_GAUSSIAN 0
#define FILTER_UNIFORM 1
#define FILTER_ELLIPSOID 2
#define FILTER_SHIFT 3

// The Bessel function J1: its power series below 12 (terms fall once m exceeds x/2; the largest is ~4e3 at x = 12,
// so ~1e-12 is lost to cancellation), Hankel's asymptotic expansion from 12 on (its terms shrink until k ~ 2x;
// truncated there it is within ~1e-12). Checked against scipy.special.j1 on [0, 300]: 9e-13 at most.
double bessel_j1(double x) {
    if (x < 12.0) {
        const double q = -0.25 * x * x;
        double term = 0.5 * x, sum = 0.0;
        for (int m = 1; m < 60; m++) {
            sum += term;
            term *= q / (double)(m * (m + 1));
            if (fabs(term) < 1e-17 * fabs(sum)) break;
        }
        return sum;
    }
    // mu = 4 (order 1); P and Q collect the even and odd terms with alternating signs.
    double p = 1.0, q = 0.0, term = 1.0;
    for (int k = 1; k < 60; k++) {
        const double odd = (double)(2 * k - 1);
        const double next = term * (4.0 - odd * odd) / ((double)k * 8.0 * x);
        if (fabs(next) > fabs(term)) break;
        term = next;
        switch (k & 3) {
            case 1: q += term; break;
            case 2: p -= term; break;
            case 3: q -= term; break;
            default: p += term; break;
        }
        if (fabs(term) < 1e-17) break;
    }
    const double chi = x - 0.75 * M_PI;
    return sqrt(2.0 / (M_PI * x)) * (p * cos(chi) - q * sin(chi));
}

// One kept axis (slot k, vector component c): its index, offsets and its share of the factor. `k` is numpy's
// signed frequency index (fftfreq · n) or, along a real transform's axis, the index itself.
#define FOURIER_AXIS(slot, c) \
    if ((slot) < nd) { \
        const IDX n = (IDX)shape.c; \
        const IDX i = rest % n; \
        rest /= n; \
        ox += i * (IDX)sx.c; \
        oo += i * (IDX)so.c; \
        const double k = (((halved >> (slot)) & 1u) || i < (n + 1) / 2) ? (double)i : (double)i - (double)n; \
        ACCUMULATE(param.c, k) \
    }

#if FILTER == FILTER_GAUSSIAN
// param = 2π²σ²/L²; scipy sets a factor whose exponent exceeds 50 to 0.
#define START 1.0
#define ACCUMULATE(p, k) { const double e = (p) * (k) * (k); acc *= e > 50.0 ? 0.0 : exp(-e); }
#elif FILTER == FILTER_UNIFORM
// param = π·size/L, or 0 for a size <= 0 (scipy: the zero frequency keeps 1, every other becomes 0).
#define START 1.0
#define ACCUMULATE(p, k) { const double t = (p) * (k); acc *= (k) == 0.0 ? 1.0 : ((p) > 0.0 ? sin(t) / t : 0.0); }
#elif FILTER == FILTER_ELLIPSOID
// param = π·|size|/L: acc gathers r² = Σ (param·k)².
#define START 0.0
#define ACCUMULATE(p, k) { const double t = (p) * (k); acc += t * t; }
#else
// param = −2π·shift/L: acc gathers the phase.
#define START 0.0
#define ACCUMULATE(p, k) { acc += (p) * (k); }
#endif

kernel void fourier_filter(global const T* restrict x, IDX x0, global O* restrict out, IDX o0, uint nd,
                           ulong8 shape, double8 param, uint halved, ulong8 sx, ulong8 so, IDX count) {
    for (IDX b = get_global_id(0); b < count; b += get_global_size(0)) {
        IDX rest = b, ox = 0, oo = 0;
        double acc = START;
        FOURIER_AXIS(7, s7) FOURIER_AXIS(6, s6) FOURIER_AXIS(5, s5) FOURIER_AXIS(4, s4)
        FOURIER_AXIS(3, s3) FOURIER_AXIS(2, s2) FOURIER_AXIS(1, s1) FOURIER_AXIS(0, s0)
#if IS_COMPLEX
        const double2 v = convert_double2(x[x0 + ox]);
#else
        const double2 v = (double2)((double)x[x0 + ox], 0.0);
#endif
#if FILTER == FILTER_SHIFT
        const double c = cos(acc), s = sin(acc);
        const double2 y = (double2)(v.x * c - v.y * s, v.x * s + v.y * c);
#else
#if FILTER == FILTER_ELLIPSOID
        const double r = sqrt(acc);
#if RANK == 1
        const double factor = r > 0.0 ? sin(r) / r : 1.0;
#elif RANK == 2
        const double factor = r > 0.0 ? 2.0 * bessel_j1(r) / r : 1.0;
#else
        const double factor = r > 0.0 ? 3.0 * (sin(r) - r * cos(r)) / (r * r * r) : 1.0;
#endif
#else
        const double factor = acc;
#endif
        const double2 y = v * factor;
#endif
#if O_COMPLEX
        out[o0 + oo] = (O)((OR)y.x, (OR)y.y);
#else
        out[o0 + oo] = (O)y.x;
#endif
    }
}

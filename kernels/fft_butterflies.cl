// The butterflies of the FFT kernels (fft.cl's global passes and fft_lines.cl's register kernel): length-R DFTs
// of R values in registers for R = 2, 3, 4, 5, 7, 8 and 16, forward (`inverse` = 0, exp(−2πi·rk/R)) or inverse.
// The host prepends fft_cos_R / fft_sin_R (cos and sin of 2πq/R in float64) for R = 3, 5, 7, 8 and 16. Callers
// that know the direction at compile time pass a constant, and the selects fold away.

inline T twiddle(global const T* roots, IDX k, int inverse) {
    T w = roots[k];
    return inverse ? CONJ(w) : w;
}

// -i·v forward, +i·v inverse: the quarter turn of radix 4.
inline T quarter_turn(T v, int inverse) {
    return inverse ? (T)(-v.y, v.x) : (T)(v.y, -v.x);
}

inline void dft2(T* v, int inverse) {
    T a = v[0], b = v[1];
    v[0] = a + b;
    v[1] = a - b;
}

inline void dft4(T* v, int inverse) {
    T a0 = v[0] + v[2], a1 = v[0] - v[2], a2 = v[1] + v[3], a3 = quarter_turn(v[1] - v[3], inverse);
    v[0] = a0 + a2;
    v[1] = a1 + a3;
    v[2] = a0 - a2;
    v[3] = a1 - a3;
}

// The generic length-R DFT from the tables: y_k = Σ_r v_r · exp(∓2πi·rk/R).
#define DEFINE_DFT(RAD) \
    inline void dft##RAD(T* v, int inverse) { \
        T y[RAD]; \
        _Pragma("unroll") for (int k = 0; k < RAD; k++) { \
            T acc = v[0]; \
            _Pragma("unroll") for (int r = 1; r < RAD; r++) { \
                int q = (r * k) % RAD; \
                T w = (T)(fft_cos_##RAD[q], inverse ? fft_sin_##RAD[q] : -fft_sin_##RAD[q]); \
                acc += MUL(v[r], w); \
            } \
            y[k] = acc; \
        } \
        _Pragma("unroll") for (int k = 0; k < RAD; k++) v[k] = y[k]; \
    }

DEFINE_DFT(3)
DEFINE_DFT(5)
DEFINE_DFT(7)

// Lengths 8 = 4·2 and 16 = 4·4 (Q = 2, 4): with x indexed b + Q·a (a < 4, b < Q) and X indexed c + 4·d, four-point
// transforms over a, twiddles ω_RAD^{b·c}, then Q-point transforms over b.
#define DEFINE_DFT_4Q(RAD, Q) \
    inline void dft##RAD(T* v, int inverse) { \
        T a[RAD]; \
        _Pragma("unroll") for (int b = 0; b < Q; b++) { \
            T t[4] = {v[b], v[b + Q], v[b + 2 * Q], v[b + 3 * Q]}; \
            dft4(t, inverse); \
            _Pragma("unroll") for (int c = 0; c < 4; c++) { \
                int q = b * c; \
                T w = (T)(fft_cos_##RAD[q], inverse ? fft_sin_##RAD[q] : -fft_sin_##RAD[q]); \
                a[b * 4 + c] = q == 0 ? t[c] : MUL(t[c], w); \
            } \
        } \
        _Pragma("unroll") for (int c = 0; c < 4; c++) { \
            T t[Q]; \
            _Pragma("unroll") for (int b = 0; b < Q; b++) t[b] = a[b * 4 + c]; \
            dft##Q(t, inverse); \
            _Pragma("unroll") for (int d = 0; d < Q; d++) v[c + 4 * d] = t[d]; \
        } \
    }

DEFINE_DFT_4Q(8, 2)
DEFINE_DFT_4Q(16, 4)

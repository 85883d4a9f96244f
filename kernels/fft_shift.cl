// FftShift (numpy.fft.fftshift / ifftshift) as numpy.roll over up to eight axes: out[i] = x[(i − shift) mod n]
// along each axis, unrolled over the ulong8 components like batch_offsets3.
#define ROLL_AXIS(k, c) \
    if ((k) < nd) { \
        const IDX n = (IDX)shape.c; \
        const IDX i = rest % n; \
        rest /= n; \
        IDX from = i + n - (IDX)shift.c; \
        if (from >= n) from -= n; \
        ox += from * (IDX)sx.c; \
        oo += i * (IDX)so.c; \
    }

kernel void roll(global const T* restrict x, IDX x0, global T* restrict out, IDX o0, uint nd, ulong8 shape,
                 ulong8 shift, ulong8 sx, ulong8 so, IDX count) {
    for (IDX b = get_global_id(0); b < count; b += get_global_size(0)) {
        IDX rest = b, ox = 0, oo = 0;
        ROLL_AXIS(7, s7) ROLL_AXIS(6, s6) ROLL_AXIS(5, s5) ROLL_AXIS(4, s4)
        ROLL_AXIS(3, s3) ROLL_AXIS(2, s2) ROLL_AXIS(1, s1) ROLL_AXIS(0, s0)
        out[o0 + oo] = x[x0 + ox];
    }
}

// numpy basic slicing (Slice): out[i] = x[x0 + Σ i_k · sx_k] over up to eight kept axes, where the host folded
// every axis's start (and each integer index) into x0 and each axis's step into its signed stride sx_k — a
// negative step reads backwards, which the unsigned views of the copy planner cannot express.
#define GATHER_AXIS(k, c) \
    if ((k) < nd) { \
        const IDX n = (IDX)shape.c; \
        const IDX i = rest % n; \
        rest /= n; \
        ox += (long)i * sx.c; \
        oo += i * (IDX)so.c; \
    }

kernel void slice_gather(global const T* restrict x, long x0, global T* restrict out, IDX o0, uint nd, ulong8 shape,
                         long8 sx, ulong8 so, IDX count) {
    for (IDX b = get_global_id(0); b < count; b += get_global_size(0)) {
        IDX rest = b, oo = 0;
        long ox = 0;
        GATHER_AXIS(7, s7) GATHER_AXIS(6, s6) GATHER_AXIS(5, s5) GATHER_AXIS(4, s4)
        GATHER_AXIS(3, s3) GATHER_AXIS(2, s2) GATHER_AXIS(1, s1) GATHER_AXIS(0, s0)
        out[o0 + oo] = x[x0 + ox];
    }
}

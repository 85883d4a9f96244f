// Shared by every cliper kernel source (prepended by the host). The host defines, through build options:
//   T           element type: float, double, float2 or double2
//   R           its real type: float or double
//   IS_COMPLEX  1 when T is float2/double2
//   IS_DOUBLE   1 when T needs cl_khr_fp64
//   IDX         index type, uint or ulong, chosen from the largest index the launch can form
#if IS_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#if IS_COMPLEX
#define CONJ(v) ((T)((v).x, -(v).y))
#else
#define CONJ(v) (v)
#endif

// Up to eight extents or strides travel in one ulong8 argument; unpack them into a private array so a loop can
// index them.
#define UNPACK8(dst, v) vstore8((v), 0, (dst))

// The element offsets, in two arrays, of entry `b` of a row-major batch over `nd` (<= 8) axes.
inline void batch_offsets(IDX b, uint nd, ulong8 shape, ulong8 stride_a, ulong8 stride_b, IDX* off_a, IDX* off_b) {
    ulong n[8], sa[8], sb[8];
    UNPACK8(n, shape);
    UNPACK8(sa, stride_a);
    UNPACK8(sb, stride_b);
    IDX oa = 0, ob = 0;
    for (int k = (int)nd - 1; k >= 0; --k) {
        IDX extent = (IDX)n[k];
        IDX i = b % extent;
        b /= extent;
        oa += i * (IDX)sa[k];
        ob += i * (IDX)sb[k];
    }
    *off_a = oa;
    *off_b = ob;
}

// A T from a real value (imaginary part zero for complex T).
#if IS_COMPLEX
#define FROM_REAL(v) ((T)((R)(v), (R)0))
#else
#define FROM_REAL(v) ((T)(v))
#endif

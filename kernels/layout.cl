// Copies between two strided layouts of one shape: the engine behind Transpose, Permute, StridedCopy and
// XData::contiguous. Prepended by common.cl. Build options:
//   CONJUGATE    1 to store the complex conjugate
//   UNIT_STRIDE  1 when the strides the kernel walks fastest are 1 (lets the compiler drop multiplies)
//   TILE         side of the square tile of copy_tiled (a power of two)
//   TILE_ROWS    rows of the tile one work-item pass covers; each work-item moves TILE/TILE_ROWS elements

#if CONJUGATE
#define OP(v) CONJ(v)
#else
#define OP(v) (v)
#endif

// ---- copy_tiled: moves a 2-D plane through local memory so that both the reads and the writes are coalesced.
// Axis p is the one with the smallest source stride, axis q the one with the smallest destination stride; the
// remaining axes (up to 8) form a batch. One work-group moves one TILE x TILE tile of one batch entry; groups
// are numbered q-tile fastest, then p-tile, then batch entry, in a 1-D range (no per-dimension grid limits).
#if UNIT_STRIDE
#define SRC_SP ((IDX)1)
#define DST_SQ ((IDX)1)
#else
#define SRC_SP src_sp
#define DST_SQ dst_sq
#endif

__kernel __attribute__((reqd_work_group_size(TILE * TILE_ROWS, 1, 1)))
void copy_tiled(__global const T* restrict src, IDX src_off, __global T* restrict dst, IDX dst_off,
                IDX np, IDX nq, IDX src_sp, IDX src_sq, IDX dst_sp, IDX dst_sq, IDX tiles_p, IDX tiles_q,
                uint batch_nd, ulong8 batch_shape, ulong8 batch_src, ulong8 batch_dst)
{
    // One column of padding: the column reads of the store phase then hit distinct banks.
    __local T tile[TILE][TILE + 1];
    IDX g = (IDX)get_group_id(0);
    const IDX tq = g % tiles_q;
    g /= tiles_q;
    const IDX tp = g % tiles_p;
    g /= tiles_p;
    IDX bs = 0, bd = 0;
    if (batch_nd > 0) batch_offsets(g, batch_nd, batch_shape, batch_src, batch_dst, &bs, &bd);
    src += src_off + bs;
    dst += dst_off + bd;

    const uint lid = get_local_id(0);
    const uint lx = lid % TILE, ly = lid / TILE;
    const IDX p0 = tp * TILE, q0 = tq * TILE;
    if (p0 + TILE <= np && q0 + TILE <= nq) {
        // Interior tile: no bounds checks (the condition is uniform over the work-group, so the barrier is safe).
        __global const T* s = src + (p0 + lx) * SRC_SP + (q0 + ly) * src_sq;
        #pragma unroll
        for (uint r = 0; r < TILE; r += TILE_ROWS) tile[ly + r][lx] = s[r * src_sq];
        barrier(CLK_LOCAL_MEM_FENCE);
        __global T* d = dst + (q0 + lx) * DST_SQ + (p0 + ly) * dst_sp;
        #pragma unroll
        for (uint r = 0; r < TILE; r += TILE_ROWS) d[r * dst_sp] = OP(tile[lx][ly + r]);
    } else {
        const IDX p = p0 + lx;
        for (uint r = 0; r < TILE; r += TILE_ROWS) {
            const IDX q = q0 + ly + r;
            if (p < np && q < nq) tile[ly + r][lx] = src[p * SRC_SP + q * src_sq];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const IDX q = q0 + lx;
        for (uint r = 0; r < TILE; r += TILE_ROWS) {
            const IDX pr = p0 + ly + r;
            if (q < nq && pr < np) dst[q * DST_SQ + pr * dst_sp] = OP(tile[lx][ly + r]);
        }
    }
}

// ---- copy_rows: when one axis is the fastest in both layouts, each row along it is copied directly.
// Dimension 0 walks the row, dimension 1 the rows (a batch over up to 8 outer axes); both loop with the grid
// stride, so any row count fits the device's grid limits.
#if UNIT_STRIDE
#define SRC_IS ((IDX)1)
#define DST_IS ((IDX)1)
#else
#define SRC_IS src_is
#define DST_IS dst_is
#endif

__kernel void copy_rows(__global const T* restrict src, IDX src_off, __global T* restrict dst, IDX dst_off,
                        IDX inner, IDX src_is, IDX dst_is, IDX rows,
                        uint outer_nd, ulong8 outer_shape, ulong8 outer_src, ulong8 outer_dst)
{
    const IDX step_rows = (IDX)get_global_size(1), step_inner = (IDX)get_global_size(0);
    for (IDX row = (IDX)get_global_id(1); row < rows; row += step_rows) {
        IDX os = 0, od = 0;
        if (outer_nd > 0) batch_offsets(row, outer_nd, outer_shape, outer_src, outer_dst, &os, &od);
        __global const T* s = src + src_off + os;
        __global T* d = dst + dst_off + od;
        for (IDX j = (IDX)get_global_id(0); j < inner; j += step_inner) d[j * DST_IS] = OP(s[j * SRC_IS]);
    }
}

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

// Tile g of copy_tiled / copy_blocks: its indices along p and q (q fastest) and its batch entry's offsets.
// A macro over the kernel's arguments, as batch_offsets is: a function taking the ulong8 arguments changes the
// calling convention on x86 CPUs.
#define LOCATE_TILE(g, tp, tq, bs, bd) \
    do { \
        IDX rest_ = (g); \
        tq = rest_ % tiles_q; \
        rest_ /= tiles_q; \
        tp = rest_ % tiles_p; \
        rest_ /= tiles_p; \
        bs = 0; \
        bd = 0; \
        if (batch_nd > 0) batch_offsets(rest_, batch_nd, batch_shape, batch_src, batch_dst, &bs, &bd); \
    } while (0)

__kernel __attribute__((reqd_work_group_size(TILE * TILE_ROWS, 1, 1)))
void copy_tiled(__global const T* restrict src, IDX src_off, __global T* restrict dst, IDX dst_off,
                IDX np, IDX nq, IDX src_sp, IDX src_sq, IDX dst_sp, IDX dst_sq, IDX tiles_p, IDX tiles_q,
                IDX tiles_total, uint batch_nd, ulong8 batch_shape, ulong8 batch_src, ulong8 batch_dst)
{
    // One column of padding: the column reads of the store phase then hit distinct banks.
    __local T tile[TILE][TILE + 1];
    const uint lid = get_local_id(0);
    const uint lx = lid % TILE, ly = lid / TILE;
    // GPUs launch one group per tile; CPUs launch fewer groups (each costs a dispatch there) that loop. The loop
    // bound depends only on the group, so the barriers inside are reached by the whole group.
    for (IDX g = (IDX)get_group_id(0); g < tiles_total; g += (IDX)get_num_groups(0)) {
        IDX tp, tq, bs, bd;
        LOCATE_TILE(g, tp, tq, bs, bd);
        __global const T* in = src + src_off + bs;
        __global T* out = dst + dst_off + bd;
        const IDX p0 = tp * TILE, q0 = tq * TILE;
        if (p0 + TILE <= np && q0 + TILE <= nq) {
            // Interior tile: no bounds checks.
            __global const T* s = in + (p0 + lx) * SRC_SP + (q0 + ly) * src_sq;
            #pragma unroll
            for (uint r = 0; r < TILE; r += TILE_ROWS) tile[ly + r][lx] = s[r * src_sq];
            barrier(CLK_LOCAL_MEM_FENCE);
            __global T* d = out + (q0 + lx) * DST_SQ + (p0 + ly) * dst_sp;
            #pragma unroll
            for (uint r = 0; r < TILE; r += TILE_ROWS) d[r * dst_sp] = OP(tile[lx][ly + r]);
        } else {
            const IDX p = p0 + lx;
            for (uint r = 0; r < TILE; r += TILE_ROWS) {
                const IDX q = q0 + ly + r;
                if (p < np && q < nq) tile[ly + r][lx] = in[p * SRC_SP + q * src_sq];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            const IDX q = q0 + lx;
            for (uint r = 0; r < TILE; r += TILE_ROWS) {
                const IDX pr = p0 + ly + r;
                if (q < nq && pr < np) out[q * DST_SQ + pr * dst_sp] = OP(tile[lx][ly + r]);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE); // the tile is read before the next iteration overwrites it
    }
}

// ---- copy_blocks: copy_tiled for CPUs, where local memory and barriers cost more than they save (PoCL runs a
// group's work-items one after another): each work-item moves one BLOCK x BLOCK tile itself through private
// memory, reading BLOCK runs along p and writing BLOCK runs along q. Same arguments as copy_tiled.
#ifdef BLOCK
__kernel void copy_blocks(__global const T* restrict src, IDX src_off, __global T* restrict dst, IDX dst_off,
                          IDX np, IDX nq, IDX src_sp, IDX src_sq, IDX dst_sp, IDX dst_sq, IDX tiles_p, IDX tiles_q,
                          IDX tiles_total, uint batch_nd, ulong8 batch_shape, ulong8 batch_src, ulong8 batch_dst)
{
    for (IDX g = (IDX)get_global_id(0); g < tiles_total; g += (IDX)get_global_size(0)) {
        IDX tp, tq, bs, bd;
        LOCATE_TILE(g, tp, tq, bs, bd);
        __global const T* in = src + src_off + bs;
        __global T* out = dst + dst_off + bd;
        const IDX p0 = tp * BLOCK, q0 = tq * BLOCK;
        T v[BLOCK][BLOCK];
        if (p0 + BLOCK <= np && q0 + BLOCK <= nq) {
            for (int i = 0; i < BLOCK; ++i)
                for (int j = 0; j < BLOCK; ++j) v[i][j] = in[(p0 + j) * SRC_SP + (q0 + i) * src_sq];
            for (int j = 0; j < BLOCK; ++j)
                for (int i = 0; i < BLOCK; ++i) out[(q0 + i) * DST_SQ + (p0 + j) * dst_sp] = OP(v[i][j]);
        } else {
            for (IDX q = q0; q < min(q0 + BLOCK, nq); ++q)
                for (IDX p = p0; p < min(p0 + BLOCK, np); ++p) out[q * DST_SQ + p * dst_sp] = OP(in[p * SRC_SP + q * src_sq]);
        }
    }
}
#endif

// ---- copy_rows: when one axis is the fastest in both layouts, each row along it is copied directly.
// Dimension 0 walks the row, dimension 1 the rows (a batch over up to 8 outer axes); both loop with the grid
// stride, so any row count fits the device's grid limits. One work-item per row works out the row's offsets
// (divisions, one per outer axis) and shares them through local memory, instead of every work-item doing so
// for every element.
#if UNIT_STRIDE
#define SRC_IS ((IDX)1)
#define DST_IS ((IDX)1)
#else
#define SRC_IS src_is
#define DST_IS dst_is
#endif

// The host never launches more than this many rows per work-group.
#define MAX_GROUP_ROWS 256

__kernel void copy_rows(__global const T* restrict src, IDX src_off, __global T* restrict dst, IDX dst_off,
                        IDX inner, IDX src_is, IDX dst_is, IDX rows,
                        uint outer_nd, ulong8 outer_shape, ulong8 outer_src, ulong8 outer_dst)
{
    __local IDX row_offsets[2 * MAX_GROUP_ROWS];
    const uint l0 = get_local_id(0), l1 = get_local_id(1);
    const IDX step_rows = (IDX)get_global_size(1), step_inner = (IDX)get_global_size(0);
    // `first` depends only on the group, so every work-item of a group runs the same iterations: the barriers
    // are safe.
    for (IDX first = (IDX)(get_group_id(1) * get_local_size(1)); first < rows; first += step_rows) {
        const IDX row = first + l1;
        barrier(CLK_LOCAL_MEM_FENCE); // the previous iteration has read its offsets
        if (l0 == 0) {
            IDX os = 0, od = 0;
            if (outer_nd > 0 && row < rows) batch_offsets(row, outer_nd, outer_shape, outer_src, outer_dst, &os, &od);
            row_offsets[2 * l1] = os;
            row_offsets[2 * l1 + 1] = od;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (row < rows) {
            __global const T* s = src + src_off + row_offsets[2 * l1];
            __global T* d = dst + dst_off + row_offsets[2 * l1 + 1];
            IDX j = (IDX)get_global_id(0);
            // Four independent loads in flight before the stores, then the remainder.
            for (; j + 3 * step_inner < inner; j += 4 * step_inner) {
                const T a = s[j * SRC_IS], b = s[(j + step_inner) * SRC_IS];
                const T c = s[(j + 2 * step_inner) * SRC_IS], e = s[(j + 3 * step_inner) * SRC_IS];
                d[j * DST_IS] = OP(a);
                d[(j + step_inner) * DST_IS] = OP(b);
                d[(j + 2 * step_inner) * DST_IS] = OP(c);
                d[(j + 3 * step_inner) * DST_IS] = OP(e);
            }
            for (; j < inner; j += step_inner) d[j * DST_IS] = OP(s[j * SRC_IS]);
        }
    }
}

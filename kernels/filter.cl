// Direct convolution kernels (Convolution, SeparableConvolution). Prepended by common.cl. Build options:
//   T, R, IDX, BORDER   element type, index type, border rule (border_index in common.cl)
//   K, K_COMPLEX        filter element type: T, or R for a real filter on complex data
//   FILTER_SPACE        __constant when the filter fits the device's constant memory, else __global
//   UNIT_X              1 when the input's and the output's last-axis strides are both 1
//   SKIP_ZERO_TAPS      1: taps of weight 0 take no part in the sum (Filter::skipping_zero_taps)
//   WG                  conv_direct: work-items per group
//   TX, TY, RY          conv_tiled: TX x TY work-items, each computing RY outputs down a column
//
// Both compute, for every entry of a batch over the leading axes, a correlation over the three trailing axes
// (z, y, x; lower-rank filters have extent 1 on the missing axes):
//     out[o] = sum_j w[j] * in[o * stride + j * dilation - start]      (per axis)
// A convolution is the same sum with the filter flipped and another start; the host arranges both, and the
// output modes (same / valid / full) are only different output extents and starts. Input coordinates outside
// the array read through border_index, inside the kernel: no padded copy is ever made.
//
// geo (int16): input extents z y x | output extents z y x | filter extents z y x | strides z y x |
//              dilations z y x | unused.   start (int4): z y x | unused.
// st (ulong8): input strides z y x | output strides z y x | unused.
#define NZ geo.s0
#define NY geo.s1
#define NX geo.s2
#define OZ geo.s3
#define OY geo.s4
#define OX geo.s5
#define FZ geo.s6
#define FY geo.s7
#define FX geo.s8
#define SZ geo.s9
#define SY geo.sa
#define SX geo.sb
#define DZ geo.sc
#define DY geo.sd
#define DX geo.se
#define CZ start.s0
#define CY start.s1
#define CX start.s2
#define IN_Z ((IDX)st.s0)
#define IN_Y ((IDX)st.s1)
#define OUT_Z ((IDX)st.s3)
#define OUT_Y ((IDX)st.s4)
#if UNIT_X
#define IN_X ((IDX)1)
#define OUT_X ((IDX)1)
#else
#define IN_X ((IDX)st.s2)
#define OUT_X ((IDX)st.s5)
#endif

// Data times weight: complex x complex, or real x real / complex x real (OpenCL scales a float2 by a float).
#if K_COMPLEX
#define KMUL_TAP(v, w) MUL(v, w)
#define K_IS_ZERO(w) ((w).x == 0 && (w).y == 0)
#else
#define KMUL_TAP(v, w) ((v) * (w))
#define K_IS_ZERO(w) ((w) == 0)
#endif
// SKIP_ZERO_TAPS (Filter::skipping_zero_taps, set only for filters with a zero weight): a tap of weight 0 adds 0
// whatever the value under it, so 0 · inf and 0 · NaN make no NaN (scipy.ndimage.laplace's rule).
#if SKIP_ZERO_TAPS
#define KMUL(v, w) (K_IS_ZERO(w) ? (T)(0) : KMUL_TAP(v, w))
#else
#define KMUL(v, w) KMUL_TAP(v, w)
#endif

// Element-wise stages a Pipeline fused after this convolution (src/process/elementwise/epilogue.rs): a generated
// `epilogue`, placed before this file, computes them from the value just stored at element `at` of the output
// (counted from the output's offset; their arrays share its layout) and takes the parameters EPILOGUE_PARAMS
// appends to each kernel's; with EPILOGUE_RUNS (its outputs start on a run's boundary), conv_blocked's vector
// stores call EPILOGUE_RUN(at, run), which stores vectors too. Without one, nothing.
#ifndef HAS_EPILOGUE
#define EPILOGUE_PARAMS
#define EPILOGUE(at, v) (void)(at)
#endif

// A program holds the one kernel its pass launches, chosen by the options (TX: a tile kernel, BLOCK_VX:
// conv_blocked): NVIDIA's compiler takes time for every kernel of a program, launched or not.

// ---- conv_direct: one output per work-item, reads straight from global memory (the caches catch the reuse).
// For CPUs, where local memory and barriers cost more than they save, and for filters too large to tile.
// Groups cover WG consecutive outputs of one output row and are numbered row-fastest in a 1-D range.
#ifndef TX
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void conv_direct(__global const T* restrict src, IDX src_off, __global T* restrict dst, IDX dst_off,
                 FILTER_SPACE const K* restrict w, int16 geo, int4 start, ulong8 st, T value,
                 uint nd, ulong8 b_shape, ulong8 b_src, ulong8 b_dst, IDX x_blocks, IDX groups EPILOGUE_PARAMS)
{
    for (IDX g = (IDX)get_group_id(0); g < groups; g += (IDX)get_num_groups(0)) {
        IDX rest = g / x_blocks;
        const int ox = (int)(g - rest * x_blocks) * WG + (int)get_local_id(0);
        const int oy = (int)(rest % (IDX)OY);
        rest /= (IDX)OY;
        const int oz = (int)(rest % (IDX)OZ);
        rest /= (IDX)OZ;
        if (ox >= OX) continue;
        IDX bs = 0, bd = 0;
        if (nd > 0) batch_offsets(rest, nd, b_shape, b_src, b_dst, &bs, &bd);
        __global const T* in = src + src_off + bs;
        const int x0 = ox * SX - CX, y0 = oy * SY - CY, z0 = oz * SZ - CZ;
        T acc = ZERO;
        if (x0 >= 0 && x0 + (FX - 1) * DX < NX && y0 >= 0 && y0 + (FY - 1) * DY < NY && z0 >= 0 &&
            z0 + (FZ - 1) * DZ < NZ) {
            // Interior: the whole window is inside, no border mapping.
            for (int fz = 0; fz < FZ; ++fz) {
                for (int fy = 0; fy < FY; ++fy) {
                    __global const T* row = in + (IDX)(z0 + fz * DZ) * IN_Z + (IDX)(y0 + fy * DY) * IN_Y + (IDX)x0 * IN_X;
                    FILTER_SPACE const K* wr = w + (fz * FY + fy) * FX;
                    for (int fx = 0; fx < FX; ++fx) acc += KMUL(row[(IDX)(fx * DX) * IN_X], wr[fx]);
                }
            }
        } else {
            for (int fz = 0; fz < FZ; ++fz) {
                const int iz = border_index(z0 + fz * DZ, NZ);
                for (int fy = 0; fy < FY; ++fy) {
                    const int iy = border_index(y0 + fy * DY, NY);
                    const int outside = iz < 0 || iy < 0;
                    __global const T* row = in + (IDX)max(iz, 0) * IN_Z + (IDX)max(iy, 0) * IN_Y;
                    FILTER_SPACE const K* wr = w + (fz * FY + fy) * FX;
                    for (int fx = 0; fx < FX; ++fx) {
                        const int ix = border_index(x0 + fx * DX, NX);
                        const T v = (outside || ix < 0) ? value : row[(IDX)ix * IN_X];
                        acc += KMUL(v, wr[fx]);
                    }
                }
            }
        }
        const IDX at = bd + (IDX)oz * OUT_Z + (IDX)oy * OUT_Y + (IDX)ox * OUT_X;
        dst[dst_off + at] = acc;
        EPILOGUE(at, acc);
    }
}
#endif

// Group g of the tile kernels (conv_tiled, conv_blocked): tile column gx (fastest), tile row gy, index gz along
// the third axis (tiles_z output planes, or runs of them), then the batch entry, whose offsets land in bs and bd.
// A macro over the kernel's arguments, as batch_offsets is: a function taking the ulong8 arguments changes the
// calling convention on x86 CPUs.
#define LOCATE_GROUP(g, tiles_z, gx, gy, gz, bs, bd) \
    do { \
        IDX rest_ = (g); \
        gx = (int)(rest_ % tiles_x); \
        rest_ /= tiles_x; \
        gy = (int)(rest_ % tiles_y); \
        rest_ /= tiles_y; \
        gz = (int)(rest_ % (tiles_z)); \
        rest_ /= (tiles_z); \
        bs = 0; \
        bd = 0; \
        if (nd > 0) batch_offsets(rest_, nd, b_shape, b_src, b_dst, &bs, &bd); \
    } while (0)

// ---- conv_tiled: a group computes a TX x (TY*RY) block of outputs of one z plane. For each filter plane it
// stages the input block the outputs need (halo included, border rule applied once per element on the way in)
// in local memory, then every work-item accumulates RY outputs, one per TY rows, so that neighbouring
// work-items read neighbouring local words and write neighbouring global ones. `tile` is sized by the host:
// LW x LH elements with LW = (TX-1)*SX + (FX-1)*DX + 1 and LH = (TY*RY-1)*SY + (FY-1)*DY + 1.
#if defined(TX) && !defined(BLOCK_VX)
__kernel __attribute__((reqd_work_group_size(TX * TY, 1, 1)))
void conv_tiled(__global const T* restrict src, IDX src_off, __global T* restrict dst, IDX dst_off,
                FILTER_SPACE const K* restrict w, int16 geo, int4 start, ulong8 st, T value,
                uint nd, ulong8 b_shape, ulong8 b_src, ulong8 b_dst, IDX tiles_x, IDX tiles_y, IDX groups,
                __local T* tile EPILOGUE_PARAMS)
{
    const int lid = (int)get_local_id(0), tx = lid % TX, ty = lid / TX;
    const int LW = (TX - 1) * SX + (FX - 1) * DX + 1, LH = (TY * RY - 1) * SY + (FY - 1) * DY + 1;
    for (IDX g = (IDX)get_group_id(0); g < groups; g += (IDX)get_num_groups(0)) {
        int gx, gy, oz;
        IDX bs, bd;
        LOCATE_GROUP(g, (IDX)OZ, gx, gy, oz, bs, bd);
        __global const T* in = src + src_off + bs;
        const int ox0 = gx * TX, oy0 = gy * TY * RY;
        const int x0 = ox0 * SX - CX, y0 = oy0 * SY - CY, z0 = oz * SZ - CZ;
        const int inside = x0 >= 0 && x0 + LW <= NX && y0 >= 0 && y0 + LH <= NY;
        T acc[RY];
        #pragma unroll
        for (int r = 0; r < RY; ++r) acc[r] = ZERO;
        for (int fz = 0; fz < FZ; ++fz) {
            const int iz = border_index(z0 + fz * DZ, NZ);
            if (iz >= 0 && inside) {
                __global const T* plane = in + (IDX)iz * IN_Z + (IDX)y0 * IN_Y + (IDX)x0 * IN_X;
                for (int ly = ty; ly < LH; ly += TY)
                    for (int lx = tx; lx < LW; lx += TX) tile[ly * LW + lx] = plane[(IDX)ly * IN_Y + (IDX)lx * IN_X];
            } else {
                __global const T* plane = in + (IDX)max(iz, 0) * IN_Z;
                for (int ly = ty; ly < LH; ly += TY) {
                    const int iy = border_index(y0 + ly, NY);
                    for (int lx = tx; lx < LW; lx += TX) {
                        const int ix = border_index(x0 + lx, NX);
                        tile[ly * LW + lx] =
                            (iz < 0 || iy < 0 || ix < 0) ? value : plane[(IDX)iy * IN_Y + (IDX)ix * IN_X];
                    }
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            FILTER_SPACE const K* wz = w + fz * FY * FX;
            for (int fy = 0; fy < FY; ++fy) {
                for (int fx = 0; fx < FX; ++fx) {
                    const K wv = wz[fy * FX + fx];
                    __local const T* t = tile + (ty * SY + fy * DY) * LW + tx * SX + fx * DX;
                    #pragma unroll
                    for (int r = 0; r < RY; ++r) acc[r] += KMUL(t[r * TY * SY * LW], wv);
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        const int ox = ox0 + tx;
        const IDX at0 = bd + (IDX)oz * OUT_Z + (IDX)ox * OUT_X;
        __global T* out = dst + dst_off + at0;
        #pragma unroll
        for (int r = 0; r < RY; ++r) {
            const int oy = oy0 + ty + r * TY;
            if (ox < OX && oy < OY) {
                out[(IDX)oy * OUT_Y] = acc[r];
                EPILOGUE(at0 + (IDX)oy * OUT_Y, acc[r]);
            }
        }
    }
}
#endif

// ---- conv_blocked: the filter extents KX, KY, KZ are compiled in (stride and dilation 1). A group computes a
// (TX·VX) x (TY·RY) block of outputs for a run of `rz` consecutive output planes; work-item (tx, ty) owns VX
// neighbouring outputs in each of RY consecutive rows. The group stages one input plane at a time in local
// memory (halo included, the border rule applied on the way in) and each plane is read from global memory once
// for the whole run of planes. Work-items then stream the RY + KY - 1 input rows under their outputs through
// registers: each row is read from local memory once, as whole vectors, and feeds every output row it
// touches, so that local reads stay far below the multiply-adds. Output planes still open hold their
// accumulators in a ring of KZ slots: slot k collects output plane p - k from input plane p, slot KZ - 1 is
// complete after it and is stored, and the slots shift down.
// Build options (besides those above): KX KY KZ, TX TY, VX (a multiple of VW), RY, VW and VT (VW elements as
// one 16-byte vector type), ALIGNED_OUT (1: every output row starts on a VW boundary, so whole runs are stored
// as vectors), UNROLL_ROWS (1: unroll the row stream fully, putting every weight index at compile time),
// SEPARABLE (1: w holds a rank-1 filter's factors, the KZ·KY products of its z and y factors, then its KX x
// factor, applied one after the other).
#ifdef BLOCK_VX
#ifndef SEPARABLE
#define SEPARABLE 0
#endif
#define VX BLOCK_VX
#define LW (TX * VX + KX - 1)
#define LPV ((LW + VW - 1) / VW)
#define LH (TY * RY + KY - 1)
#define NWIN ((VX + KX - 1 + VW - 1) / VW)

// Elements of a staged plane per work-item, and their loads into the registers pre[] from input plane `iz`
// (border_index already applied; < 0 for a constant border's outside), border rule included.
#define NPRE ((LH * LW + TX * TY - 1) / (TX * TY))
#define PREFETCH(iz) \
    do { \
        const int iz_ = (iz); \
        if (iz_ >= 0 && inside) { \
            __global const T* from_ = in + (IDX)iz_ * IN_Z + (IDX)y0 * IN_Y + (IDX)x0 * IN_X; \
            _Pragma("unroll") for (int k = 0; k < NPRE; ++k) { \
                const int i = lid + k * TX * TY; \
                if (i < LH * LW) pre[k] = from_[(IDX)(i / LW) * IN_Y + (IDX)(i % LW) * IN_X]; \
            } \
        } else { \
            __global const T* from_ = in + (IDX)max(iz_, 0) * IN_Z; \
            _Pragma("unroll") for (int k = 0; k < NPRE; ++k) { \
                const int i = lid + k * TX * TY; \
                const int iy = border_index(y0 + i / LW, NY), ix = border_index(x0 + i % LW, NX); \
                if (i < LH * LW) \
                    pre[k] = (iz_ < 0 || iy < 0 || ix < 0) ? value : from_[(IDX)iy * IN_Y + (IDX)ix * IN_X]; \
            } \
        } \
    } while (0)

__kernel __attribute__((reqd_work_group_size(TX * TY, 1, 1)))
void conv_blocked(__global const T* restrict src, IDX src_off, __global T* restrict dst, IDX dst_off,
                  FILTER_SPACE const K* restrict w, int16 geo, int4 start, ulong8 st, T value,
                  uint nd, ulong8 b_shape, ulong8 b_src, ulong8 b_dst, IDX tiles_x, IDX tiles_y, IDX z_blocks,
                  IDX groups, int rz EPILOGUE_PARAMS)
{
    __local VT tile_v[LH * LPV];
    __local T* tile = (__local T*)tile_v;
    const int lid = (int)get_local_id(0), tx = lid % TX, ty = lid / TX;
    for (IDX g = (IDX)get_group_id(0); g < groups; g += (IDX)get_num_groups(0)) {
        int gx, gy, zb;
        IDX bs, bd;
        LOCATE_GROUP(g, z_blocks, gx, gy, zb, bs, bd);
        const int oz0 = zb * rz;
        __global const T* in = src + src_off + bs;
        const int ox0 = gx * TX * VX, oy0 = gy * TY * RY;
        const int x0 = ox0 - CX, y0 = oy0 - CY;
        const int inside = x0 >= 0 && x0 + LW <= NX && y0 >= 0 && y0 + LH <= NY;
        const int ox = ox0 + tx * VX, oy = oy0 + ty * RY;
        const IDX at0 = bd + (IDX)oy * OUT_Y + (IDX)ox * OUT_X;
        __global T* out = dst + dst_off + at0;
        T acc[KZ][RY][VX];
        #pragma unroll
        for (int k = 0; k < KZ; ++k)
            #pragma unroll
            for (int r = 0; r < RY; ++r)
                #pragma unroll
                for (int v = 0; v < VX; ++v) acc[k][r][v] = ZERO;
        const int planes = min(rz, OZ - oz0) + KZ - 1;
#if KZ > 1
        // Planes are fetched into registers one plane ahead, so that their loads are in flight while the plane
        // before is computed (one plane at a time left 3×3×3 on the H100 at 1.5 TB/s).
        T pre[NPRE];
        PREFETCH(border_index(oz0 - CZ, NZ));
#endif
        for (int p = 0; p < planes; ++p) {
#if KZ > 1
            #pragma unroll
            for (int k = 0; k < NPRE; ++k) {
                const int i = lid + k * TX * TY;
                if (i < LH * LW) tile[(i / LW) * LPV * VW + i % LW] = pre[k];
            }
#else
            const int iz = border_index(oz0 + p - CZ, NZ);
            // Unrolled so that each work-item has several loads in flight before it stores any of them: one at
            // a time left the H100 at 2.0 TB/s on 3×3.
            if (iz >= 0 && inside) {
                __global const T* plane = in + (IDX)iz * IN_Z + (IDX)y0 * IN_Y + (IDX)x0 * IN_X;
                #pragma unroll 8
                for (int i = lid; i < LH * LW; i += TX * TY) {
                    const int ly = i / LW, lx = i - ly * LW;
                    tile[ly * LPV * VW + lx] = plane[(IDX)ly * IN_Y + (IDX)lx * IN_X];
                }
            } else {
                __global const T* plane = in + (IDX)max(iz, 0) * IN_Z;
                #pragma unroll 8
                for (int i = lid; i < LH * LW; i += TX * TY) {
                    const int ly = i / LW, lx = i - ly * LW;
                    const int iy = border_index(y0 + ly, NY), ix = border_index(x0 + lx, NX);
                    tile[ly * LPV * VW + lx] =
                        (iz < 0 || iy < 0 || ix < 0) ? value : plane[(IDX)iy * IN_Y + (IDX)ix * IN_X];
                }
            }
#endif
            barrier(CLK_LOCAL_MEM_FENCE);
#if KZ > 1
            if (p + 1 < planes) PREFETCH(border_index(oz0 + p + 1 - CZ, NZ));
#endif
            __local const VT* rows = tile_v + ty * RY * LPV + tx * (VX / VW);
#if UNROLL_ROWS
            #pragma unroll
#else
            #pragma unroll 1
#endif
            for (int lr = 0; lr < RY + KY - 1; ++lr) {
                Run win[NWIN];
                #pragma unroll
                for (int k = 0; k < NWIN; ++k) win[k].v = rows[lr * LPV + k];
#if SEPARABLE
                // The row filtered along x once, then handed down to every output row it touches: KX + KY·KZ
                // multiply-adds per output and row instead of KX·KY·KZ, and the image is read and written once
                // (separable passes move it once per axis).
                T h[VX];
                #pragma unroll
                for (int v = 0; v < VX; ++v) h[v] = ZERO;
                #pragma unroll
                for (int fx = 0; fx < KX; ++fx) {
                    const K wv = w[KZ * KY + fx];
                    #pragma unroll
                    for (int v = 0; v < VX; ++v) h[v] += KMUL(win[(v + fx) / VW].s[(v + fx) % VW], wv);
                }
#endif
                #pragma unroll
                for (int r = 0; r < RY; ++r) {
                    const int fy = lr - r;
                    if (fy >= 0 && fy < KY) {
                        #pragma unroll
                        for (int fz = 0; fz < KZ; ++fz) {
#if SEPARABLE
                            const K wv = w[fz * KY + fy];
                            #pragma unroll
                            for (int v = 0; v < VX; ++v) acc[fz][r][v] += KMUL(h[v], wv);
#else
                            FILTER_SPACE const K* wr = w + (fz * KY + fy) * KX;
                            #pragma unroll
                            for (int fx = 0; fx < KX; ++fx) {
                                const K wv = wr[fx];
                                #pragma unroll
                                for (int v = 0; v < VX; ++v)
                                    acc[fz][r][v] += KMUL(win[(v + fx) / VW].s[(v + fx) % VW], wv);
                            }
#endif
                        }
                    }
                }
            }
            // Input plane p completes output plane p - (KZ - 1).
            const int q = p - (KZ - 1);
            if (q >= 0) {
                __global T* o = out + (IDX)(oz0 + q) * OUT_Z;
                const IDX atq = at0 + (IDX)(oz0 + q) * OUT_Z;
                #pragma unroll
                for (int r = 0; r < RY; ++r) {
                    if (oy + r < OY) {
#if ALIGNED_OUT
                        if (ox + VX <= OX) {
                            #pragma unroll
                            for (int k = 0; k < VX / VW; ++k) {
                                Run run;
                                #pragma unroll
                                for (int v = 0; v < VW; ++v) run.s[v] = acc[KZ - 1][r][k * VW + v];
                                *(__global VT*)(o + (IDX)(r * OUT_Y + k * VW)) = run.v;
#if defined(HAS_EPILOGUE_RUN) && EPILOGUE_RUNS
                                EPILOGUE_RUN(atq + (IDX)(r * OUT_Y + k * VW), run);
#elif defined(HAS_EPILOGUE)
                                #pragma unroll
                                for (int v = 0; v < VW; ++v) EPILOGUE(atq + (IDX)(r * OUT_Y + k * VW + v), run.s[v]);
#endif
                            }
                            continue;
                        }
#endif
                        #pragma unroll
                        for (int v = 0; v < VX; ++v)
                            if (ox + v < OX) {
                                o[(IDX)r * OUT_Y + (IDX)v * OUT_X] = acc[KZ - 1][r][v];
                                EPILOGUE(atq + (IDX)r * OUT_Y + (IDX)v * OUT_X, acc[KZ - 1][r][v]);
                            }
                    }
                }
            }
            #pragma unroll
            for (int k = KZ - 1; k > 0; --k)
                #pragma unroll
                for (int r = 0; r < RY; ++r)
                    #pragma unroll
                    for (int v = 0; v < VX; ++v) acc[k][r][v] = acc[k - 1][r][v];
            #pragma unroll
            for (int r = 0; r < RY; ++r)
                #pragma unroll
                for (int v = 0; v < VX; ++v) acc[0][r][v] = ZERO;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
}
#endif

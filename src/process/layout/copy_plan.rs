//! The copy planner: one view into another of the same shape, behind [`super::StridedCopy`],
//! [`super::Transpose`], [`super::Permute`] and the gathers and scatters of `XData` views (`views.rs`).
//!
//! Planning (in `init`): axes of extent 1 are dropped, the rest ordered by destination stride and merged where
//! both layouts are gap-free across them. Then:
//! - one merged axis, unit strides on both sides, no conjugation → a plain buffer copy (`clEnqueueCopyBuffer`);
//! - the destination's fastest axis is also the source's fastest → `copy_rows`, row by row;
//! - otherwise → `copy_tiled`, a local-memory tiled transpose of the plane formed by the two fastest axes,
//!   batched over the others, so both reads and writes are coalesced; on CPUs (unless tiles are given)
//!   `copy_blocks`, where each work-item moves a 16×16 block through private memory.

use crate::app::{ClApp, DeviceInfo, DeviceKind, Kernel};
use crate::data::TrackedCommand;
use crate::data::{Layout, XData};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;

/// Side of the block one work-item of `copy_blocks` (the CPU transpose) moves.
const CPU_BLOCK: usize = 16;

/// Most axes the copy kernels batch over (after merging), besides the one or two they walk directly.
const MAX_BATCH_AXES: usize = 8;

/// Tile shape of the tiled transpose kernel: each work-group moves a `tile` × `tile` block through local
/// memory with `tile` × `rows` work-items, so each work-item moves `tile / rows` elements.
///
/// [`TransposeTiles::for_device`] picks from a per-device table; a tuner can pass its own through
/// [`super::CopyParams::tiles`].
///
/// ```
/// use cliper::TransposeTiles;
/// let app = cliper::ClApp::new()?;
/// let t = TransposeTiles::for_device(app.device(), 4);
/// assert!(t.tile.is_power_of_two() && t.tile % t.rows == 0);
/// assert!(TransposeTiles { tile: 24, rows: 8 }.validate(app.device(), 4).is_err());
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TransposeTiles {
    /// Side of the square tile (a power of two, 1 to 128).
    pub tile: usize,
    /// Tile rows covered per pass (divides `tile`).
    pub rows: usize,
}

impl TransposeTiles {
    /// The tuned choice for a device and element size, shrunk where local memory or the work-group limit
    /// require.
    pub fn for_device(info: &DeviceInfo, element_bytes: usize) -> TransposeTiles {
        let vendor = info.vendor.to_lowercase();
        // Measured choices (docs/benchmarks.md). NVIDIA H100, 16384² f32: 64×8 0.745 ms, 64×4 0.757, 32×4 0.768,
        // 32×8 0.771, 64×16 0.793, 32×16 0.973 (CLBlast 0.770). PoCL on 2 Xeon cores: 64×8 a little ahead of
        // 32×8. Other devices get the classic 32×8, which asks less local memory per group.
        let mut t = match info.kind {
            DeviceKind::Gpu if vendor.contains("nvidia") => TransposeTiles { tile: 64, rows: 8 },
            DeviceKind::Cpu => TransposeTiles { tile: 64, rows: 8 },
            _ => TransposeTiles { tile: 32, rows: 8 },
        };
        while t.tile > 1 && t.local_bytes(element_bytes) > info.local_mem_bytes as usize {
            t.tile /= 2;
            t.rows = t.rows.min(t.tile);
        }
        while t.rows > 1 && t.tile * t.rows > info.max_work_group_size {
            t.rows /= 2;
        }
        t
    }

    fn local_bytes(&self, element_bytes: usize) -> usize {
        self.tile * (self.tile + 1) * element_bytes
    }

    /// `Ok` when the device can run this tile shape for elements of `element_bytes` bytes.
    pub fn validate(&self, info: &DeviceInfo, element_bytes: usize) -> Result<()> {
        let ok_shape =
            self.tile.is_power_of_two() && self.tile <= 128 && self.rows >= 1 && self.tile.is_multiple_of(self.rows);
        if !ok_shape {
            return Err(Error::invalid(
                "TransposeTiles",
                format!(
                    "tile {} × rows {}: tile must be a power of two up to 128 and rows must divide it",
                    self.tile, self.rows
                ),
            ));
        }
        if self.tile * self.rows > info.max_work_group_size {
            return Err(Error::invalid(
                "TransposeTiles",
                format!(
                    "{} work-items per group exceed the device limit of {}",
                    self.tile * self.rows,
                    info.max_work_group_size
                ),
            ));
        }
        if self.local_bytes(element_bytes) > info.local_mem_bytes as usize {
            return Err(Error::invalid(
                "TransposeTiles",
                format!(
                    "a {}×{} tile of {element_bytes}-byte elements needs {} bytes of local memory; the device has {}",
                    self.tile,
                    self.tile + 1,
                    self.local_bytes(element_bytes),
                    info.local_mem_bytes
                ),
            ));
        }
        Ok(())
    }
}

/// How the copy planner moves one view into another, as `strategy()` of [`super::Transpose`],
/// [`super::ConjugateTranspose`], [`super::Permute`] and [`super::StridedCopy`] reports it.
///
/// ```
/// use cliper::{ClApp, CopyStrategy, Process, Transpose, XData};
/// let app = ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[300, 200])?;
/// let y = XData::zeros(&app, &[200, 300])?;
/// let mut t = Transpose::new(&x, &y);
/// assert_eq!(t.strategy(), None); // before init
/// t.init()?;
/// let s = t.strategy().unwrap();
/// assert!(matches!(s, CopyStrategy::Tiled(_) | CopyStrategy::Blocks { .. }));
/// assert!(s.to_string().starts_with("copy_")); // the kernel, then its tiles: "copy_tiled 64×8"
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyStrategy {
    /// Nothing to copy (an empty array).
    Nothing,
    /// One `clEnqueueCopyBuffer`: both views are contiguous in the same order.
    Buffer,
    /// `copy_rows`: row by row, where the fastest axis is the same on both sides.
    Rows,
    /// `copy_tiled`: a transpose through local-memory tiles of this shape.
    Tiled(TransposeTiles),
    /// `copy_blocks`: the CPU transpose, each work-item moving a `block` × `block` block through registers.
    Blocks {
        /// Side of the block.
        block: usize,
    },
}

impl std::fmt::Display for CopyStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CopyStrategy::Nothing => write!(f, "none"),
            CopyStrategy::Buffer => write!(f, "copy_buffer"),
            CopyStrategy::Rows => write!(f, "copy_rows"),
            CopyStrategy::Tiled(t) => write!(f, "copy_tiled {}×{}", t.tile, t.rows),
            CopyStrategy::Blocks { block } => write!(f, "copy_blocks {block}×{block}"),
        }
    }
}

/// The most work-groups worth launching at once. GPUs get one group per tile or row chunk and hide latency with
/// them; on CPUs each group costs a dispatch (PoCL: microseconds), so a few per core loop over the work instead.
fn group_limit(info: &DeviceInfo) -> usize {
    match info.kind {
        DeviceKind::Cpu => (info.compute_units as usize * 8).max(1),
        _ => i32::MAX as usize / 1024,
    }
}

/// Extents and strides of up to eight batch axes, as the kernels take them (three `ulong8` arguments).
#[derive(Clone, Copy, Debug, Default)]
struct Batch {
    axes: u32,
    shape: [u64; 8],
    src: [u64; 8],
    dst: [u64; 8],
}

impl Batch {
    fn new(axes: &[Axis]) -> Batch {
        // One value per axis; the slots past the last axis hold 0.
        let column = |pick: fn(&Axis) -> usize| -> [u64; 8] {
            std::array::from_fn(|k| axes.get(k).map_or(0, |a| pick(a) as u64))
        };
        Batch { axes: axes.len() as u32, shape: column(|a| a.n), src: column(|a| a.src), dst: column(|a| a.dst) }
    }

    fn count(&self) -> u64 {
        self.shape.iter().take(self.axes as usize).product()
    }
}

/// One axis of the copy: extent and the stride on each side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Axis {
    n: usize,
    src: usize,
    dst: usize,
}

/// Axes of extent > 1, ordered by destination stride (slowest first) and merged where both sides allow.
fn merged_axes(src: &Layout, dst: &Layout) -> Vec<Axis> {
    let mut axes: Vec<Axis> = src
        .shape
        .iter()
        .zip(&src.strides)
        .zip(&dst.strides)
        .filter(|&((&n, _), _)| n > 1)
        .map(|((&n, &s), &d)| Axis { n, src: s, dst: d })
        .collect();
    axes.sort_by(|a, b| b.dst.cmp(&a.dst).then(b.src.cmp(&a.src)));
    let mut merged: Vec<Axis> = Vec::with_capacity(axes.len());
    for a in axes {
        match merged.last_mut() {
            Some(last) if last.src == a.n * a.src && last.dst == a.n * a.dst => {
                *last = Axis { n: last.n * a.n, src: a.src, dst: a.dst };
            }
            _ => merged.push(a),
        }
    }
    if merged.is_empty() {
        merged.push(Axis { n: 1, src: 1, dst: 1 });
    }
    merged
}

enum Step {
    Nothing,
    Buffer {
        src_offset: usize,
        dst_offset: usize,
        bytes: usize,
    },
    Rows {
        kernel: Kernel,
        inner: Axis,
        rows: u64,
        batch: Batch,
        global: [usize; 2],
        local: [usize; 2],
    },
    /// `tiles`: tiles along p, along q, and in all (batch included).
    Tiled {
        kernel: Kernel,
        /// [`CopyStrategy::Tiled`] (`copy_tiled`) or [`CopyStrategy::Blocks`] (`copy_blocks`).
        chosen: CopyStrategy,
        p: Axis,
        q: Axis,
        tiles: [u64; 3],
        batch: Batch,
        groups: usize,
        group_size: usize,
    },
}

/// A planned copy between two fixed views; built in a process's `init`, enqueued by its `launch`.
pub(crate) struct CopyPlan {
    step: Step,
    index: IndexType,
    bytes_moved: u64,
}

/// How a copy is routed once its axes are merged (the pure part of planning, unit-tested below).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Route {
    /// One merged axis with unit strides on both sides and nothing to conjugate: a buffer copy.
    Buffer,
    /// The destination's fastest axis `inner` is also the source's: row copies, the other axes a batch.
    Rows { inner: Axis, batch: Vec<Axis> },
    /// The fastest axes differ: tiles of the plane of `p` (the source's fastest) and `q` (the destination's).
    Tiled { p: Axis, q: Axis, batch: Vec<Axis> },
}

impl Route {
    /// The route for `axes` as [`merged_axes`] orders them (by destination stride, fastest last).
    fn of(axes: &[Axis], conjugate: bool) -> Option<Route> {
        // q: the destination's fastest axis (the last); p: the source's fastest, the last of those with the
        // smallest source stride.
        let (&aq, _) = axes.split_last()?;
        let q = axes.len() - 1;
        let (p, ap) = axes.iter().enumerate().rev().min_by_key(|(_, a)| a.src).map_or((q, aq), |(k, &a)| (k, a));
        if matches!(axes, [Axis { src: 1, dst: 1, .. }]) && !conjugate {
            return Some(Route::Buffer);
        }
        let batch = |skip: &[usize]| -> Vec<Axis> {
            axes.iter().enumerate().filter(|(k, _)| !skip.contains(k)).map(|(_, a)| *a).collect()
        };
        Some(if p == q {
            Route::Rows { inner: aq, batch: batch(&[q]) }
        } else {
            Route::Tiled { p: ap, q: aq, batch: batch(&[p, q]) }
        })
    }

    /// Whether the axes the kernel walks directly have unit strides (compiled in as `UNIT_STRIDE`).
    fn unit_stride(&self) -> bool {
        match self {
            Route::Buffer => true,
            Route::Rows { inner, .. } => inner.src == 1 && inner.dst == 1,
            Route::Tiled { p, q, .. } => p.src == 1 && q.dst == 1,
        }
    }
}

/// Global and local sizes of `copy_rows` for rows of `n` elements, `rows` of them, in groups of at most `group`
/// work-items and `limit` groups: each work-item moves about `ROW_ITEMS` elements of a row, with several rows per
/// group, so the barriers and offset divisions of each pass are shared by enough data (rows of 512 floats went
/// from 1 row × 256 work-items, 1845 GB/s on the H100, to 4 rows × 64).
fn rows_launch(n: usize, rows: u64, group: usize, limit: usize) -> ([usize; 2], [usize; 2]) {
    const ROW_ITEMS: usize = 8;
    let l0 = n.div_ceil(ROW_ITEMS).next_power_of_two().min(group);
    let l1 = (group / l0).max(1);
    let chunks = n.div_ceil(l0 * ROW_ITEMS).min(1 << 20);
    let row_groups = (rows as usize).div_ceil(l1).min(65535).min((limit / chunks).max(1));
    ([chunks * l0, row_groups * l1], [l0, l1])
}

/// The checks every copy makes on its two views.
fn check_views<T: Element>(op: &str, src: &XData<T>, dst: &XData<T>) -> Result<()> {
    if !src.app().same_as(dst.app()) {
        return Err(Error::invalid(op, "input and output belong to different ClApps (devices)"));
    }
    if src.shape() != dst.shape() {
        return Err(Error::shape(op, src.shape(), dst.shape()));
    }
    if src.overlaps(dst) {
        return Err(Error::invalid(
            op,
            "input and output overlap in one buffer; write into a separate array (the copy is not in place)",
        ));
    }
    Ok(())
}

impl CopyPlan {
    /// Plans `dst[...] = op(src[...])` for two views of one shape, `op` being the complex conjugate when
    /// `conjugate` is set (and the identity for real types).
    pub(crate) fn new<T: Element>(
        op: &str,
        src: &XData<T>,
        dst: &XData<T>,
        conjugate: bool,
        tiles: Option<TransposeTiles>,
    ) -> Result<CopyPlan> {
        check_views(op, src, dst)?;
        let app = dst.app();
        let element = std::mem::size_of::<T>();
        if let Some(t) = tiles {
            t.validate(app.device(), element)?;
        }
        let len = src.len();
        let bytes_moved = 2 * (len * element) as u64;
        let (s, d) = (src.layout(), dst.layout());
        let extent = [s.span(), d.span()].into_iter().flatten().map(|(_, hi)| hi as u64 + 1).max().unwrap_or(0);
        let index = IndexType::for_extent(extent);
        if len == 0 {
            return Ok(CopyPlan { step: Step::Nothing, index, bytes_moved });
        }
        let conjugate = conjugate && T::IS_COMPLEX;
        let axes = merged_axes(s, d);
        let route = Route::of(&axes, conjugate)
            .ok_or_else(|| Error::invalid(op, format!("no axes to copy for shape {:?}", src.shape())))?;
        let batch_axes = match &route {
            Route::Buffer => {
                let (src_offset, dst_offset) = (s.offset * element, d.offset * element);
                let step = Step::Buffer { src_offset, dst_offset, bytes: len * element };
                return Ok(CopyPlan { step, index, bytes_moved });
            }
            Route::Rows { batch, .. } | Route::Tiled { batch, .. } => batch,
        };
        if batch_axes.len() > MAX_BATCH_AXES {
            return Err(Error::Unsupported {
                what: format!(
                    "{op}: copying between these layouts needs {} axes after merging (shape {:?}, strides {:?} → \
                     {:?}); the kernels handle at most {}",
                    axes.len(),
                    src.shape(),
                    src.strides(),
                    dst.strides(),
                    MAX_BATCH_AXES + 2
                ),
            });
        }
        let step = Self::build::<T>(op, app, &route, Batch::new(batch_axes), index, conjugate, tiles)?;
        Ok(CopyPlan { step, index, bytes_moved })
    }

    /// The kernel of a row or tiled route, built, with its launch sizes.
    fn build<T: Element>(
        op: &str,
        app: &ClApp,
        route: &Route,
        batch: Batch,
        index: IndexType,
        conjugate: bool,
        asked: Option<TransposeTiles>,
    ) -> Result<Step> {
        let info = app.device();
        let tiles = asked.unwrap_or_else(|| TransposeTiles::for_device(info, std::mem::size_of::<T>()));
        // CPUs move whole blocks per work-item (copy_blocks) unless tiles were asked for: PoCL, 2048² f32, 10.3 ms
        // with 16×16 blocks and one work-item per group, against 14 ms for copy_tiled's best tiles (64×8) and
        // 12.7 for 8×8 blocks.
        let blocks = matches!(route, Route::Tiled { .. }) && asked.is_none() && info.kind == DeviceKind::Cpu;
        let mut options = format!(
            "{} -DIDX={} -DCONJUGATE={} -DUNIT_STRIDE={} -DTILE={} -DTILE_ROWS={}",
            T::build_options(),
            index.cl_type(),
            u8::from(conjugate),
            u8::from(route.unit_stride()),
            tiles.tile,
            tiles.rows
        );
        if blocks {
            options += &format!(" -DBLOCK={CPU_BLOCK}");
        }
        let tiles = if blocks { TransposeTiles { tile: CPU_BLOCK, rows: 1 } } else { tiles };
        // Only the kernel this copy launches is compiled.
        let used = match route {
            Route::Tiled { .. } if blocks => "copy_blocks",
            Route::Tiled { .. } => "copy_tiled",
            _ => "copy_rows",
        };
        let source = kernels::only_kernels(&kernels::with_common(kernels::LAYOUT), &[used]);
        let program = app.build_program("layout.cl", &source, &options)?;
        let kernel = program.kernel(used)?.owned_by(op);
        Ok(match *route {
            Route::Tiled { p, q, .. } => {
                let chosen =
                    if blocks { CopyStrategy::Blocks { block: CPU_BLOCK } } else { CopyStrategy::Tiled(tiles) };
                let tiles_pq = [p.n.div_ceil(tiles.tile) as u64, q.n.div_ceil(tiles.tile) as u64];
                let total = batch.count() * tiles_pq[0] * tiles_pq[1];
                let groups = usize::try_from(total).unwrap_or(usize::MAX).min(group_limit(info));
                let group_size = if blocks { 1 } else { tiles.tile * tiles.rows };
                Step::Tiled {
                    kernel,
                    chosen,
                    p,
                    q,
                    tiles: [tiles_pq[0], tiles_pq[1], total],
                    batch,
                    groups,
                    group_size,
                }
            }
            Route::Rows { inner, .. } => {
                let rows = batch.count();
                // 256 work-items, or the largest power of two the kernel allows below that.
                let limit = kernel.max_work_group_size()?.clamp(1, 256);
                let group = 1usize << (usize::BITS - 1 - limit.leading_zeros());
                let (global, local) = rows_launch(inner.n, rows, group, group_limit(info));
                Step::Rows { kernel, inner, rows, batch, global, local }
            }
            Route::Buffer => return Err(Error::invalid(op, "a buffer copy has no kernel to build")),
        })
    }

    /// Enqueues the planned copy (the same two views the plan was made for).
    pub(crate) fn launch<T: Element>(&mut self, op: &str, src: &XData<T>, dst: &XData<T>) -> Result<()> {
        let idx = self.index;
        let (so, d_o) = (src.offset() as u64, dst.offset() as u64);
        match &mut self.step {
            Step::Nothing => Ok(()),
            Step::Buffer { src_offset, dst_offset, bytes } => {
                let app: &ClApp = dst.app();
                let (reads, writes) = ([src.storage().clone()], [dst.storage().clone()]);
                let command = TrackedCommand {
                    app,
                    owner: op,
                    command: "copy_buffer",
                    global: vec![*bytes],
                    local: None,
                    reads: &reads,
                    writes: &writes,
                    bytes: Some(self.bytes_moved),
                    flops: None,
                };
                let region = (*src_offset, *dst_offset, *bytes);
                command.submit_lazy(|want_event| {
                    crate::app::copy_buffer(app, src.storage().buffer(), dst.storage().buffer(), region, want_event)
                })
            }
            Step::Rows { kernel, inner, rows, batch, global, local } => kernel
                .launch()
                .input("src", src)
                .index("src_off", idx, so)
                .output("dst", dst)
                .index("dst_off", idx, d_o)
                .index("inner", idx, inner.n as u64)
                .index("src_is", idx, inner.src as u64)
                .index("dst_is", idx, inner.dst as u64)
                .index("rows", idx, *rows)
                .scalar("outer_nd", batch.axes)
                .scalar("outer_shape", batch.shape)
                .scalar("outer_src", batch.src)
                .scalar("outer_dst", batch.dst)
                .global(global)
                .local(local)
                .work(self.bytes_moved, 0)
                .enqueue(),
            Step::Tiled { kernel, p, q, tiles, batch, groups, group_size, .. } => kernel
                .launch()
                .input("src", src)
                .index("src_off", idx, so)
                .output("dst", dst)
                .index("dst_off", idx, d_o)
                .index("np", idx, p.n as u64)
                .index("nq", idx, q.n as u64)
                .index("src_sp", idx, p.src as u64)
                .index("src_sq", idx, q.src as u64)
                .index("dst_sp", idx, p.dst as u64)
                .index("dst_sq", idx, q.dst as u64)
                .index("tiles_p", idx, tiles[0])
                .index("tiles_q", idx, tiles[1])
                .index("tiles_total", idx, tiles[2])
                .scalar("batch_nd", batch.axes)
                .scalar("batch_shape", batch.shape)
                .scalar("batch_src", batch.src)
                .scalar("batch_dst", batch.dst)
                .global(&[*groups * *group_size])
                .local(&[*group_size])
                .work(self.bytes_moved, 0)
                .enqueue(),
        }
    }

    /// What the plan does.
    pub(crate) fn strategy(&self) -> CopyStrategy {
        match self.step {
            Step::Nothing => CopyStrategy::Nothing,
            Step::Buffer { .. } => CopyStrategy::Buffer,
            Step::Rows { .. } => CopyStrategy::Rows,
            Step::Tiled { chosen, .. } => chosen,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(shape: &[usize], strides: &[usize]) -> Layout {
        Layout { shape: shape.to_vec(), strides: strides.to_vec(), offset: 0 }
    }

    #[test]
    fn contiguous_copy_merges_to_one_axis() {
        let l = Layout::row_major(&[3, 4, 5]);
        assert_eq!(merged_axes(&l, &l), vec![Axis { n: 60, src: 1, dst: 1 }]);
    }

    #[test]
    fn batched_transpose_keeps_plane_and_merges_nothing_else() {
        // src [b, r, c] row-major read as its transpose [b, c, r]; dst row-major [b, c, r].
        let src = Layout::row_major(&[3, 7, 9]).swap_last_two();
        let dst = Layout::row_major(&[3, 9, 7]);
        let axes = merged_axes(&src, &dst);
        assert_eq!(
            axes,
            vec![Axis { n: 3, src: 63, dst: 63 }, Axis { n: 9, src: 1, dst: 7 }, Axis { n: 7, src: 9, dst: 1 }]
        );
    }

    #[test]
    fn unit_axes_vanish_and_scalars_keep_one_axis() {
        let a = layout(&[1, 1], &[5, 1]);
        assert_eq!(merged_axes(&a, &a), vec![Axis { n: 1, src: 1, dst: 1 }]);
        let src = layout(&[1, 6], &[1, 1]);
        let dst = layout(&[1, 6], &[6, 1]);
        assert_eq!(merged_axes(&src, &dst), vec![Axis { n: 6, src: 1, dst: 1 }]);
    }

    #[test]
    fn routes_pick_buffer_rows_or_tiles() {
        let contiguous = [Axis { n: 60, src: 1, dst: 1 }];
        assert_eq!(Route::of(&contiguous, false), Some(Route::Buffer));
        // Conjugation needs a kernel even for a plain copy.
        assert_eq!(Route::of(&contiguous, true), Some(Route::Rows { inner: contiguous[0], batch: vec![] }));
        // Half-rows of a wider array: the rows stay rows, the row axis becomes the batch.
        let (rows, inner) = (Axis { n: 7, src: 100, dst: 50 }, Axis { n: 50, src: 1, dst: 1 });
        assert_eq!(Route::of(&[rows, inner], false), Some(Route::Rows { inner, batch: vec![rows] }));
        // A batched transpose: the plane of the two fastest axes is tiled.
        let src = Layout::row_major(&[3, 7, 9]).swap_last_two();
        let dst = Layout::row_major(&[3, 9, 7]);
        let axes = merged_axes(&src, &dst);
        let Some(Route::Tiled { p, q, batch }) = Route::of(&axes, false) else { panic!("{axes:?}") };
        assert_eq!((p, q, batch), (axes[1], axes[2], vec![axes[0]])); // p: the source's fastest, q: the destination's
        assert_eq!(Route::of(&[], false), None);
    }

    #[test]
    fn row_launches_cover_every_row_and_element() {
        for (n, rows) in [(1usize, 1u64), (7, 3), (512, 1000), (100_000, 2), (3, 1 << 20)] {
            let ([g0, g1], [l0, l1]) = rows_launch(n, rows, 256, 1 << 20);
            assert!(l0 * l1 <= 256 && g0.is_multiple_of(l0) && g1.is_multiple_of(l1), "{n} × {rows}");
            // Each work-item covers about 8 elements per pass; the kernel loops over what the grid does not cover.
            assert!(g0 >= l0 && g1 >= l1);
        }
        // Rows of 512 floats: 4 rows × 64 work-items per group.
        assert_eq!(rows_launch(512, 4096, 256, 1 << 20).1, [64, 4]);
    }
}

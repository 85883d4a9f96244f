//! One launch of the direct convolution kernels (`kernels/filter.cl`) between two fixed arrays: the unit
//! that [`super::Convolution`] and [`super::SeparableConvolution`] plan with (one pass for a direct
//! convolution, one per axis for a separable one).

use super::border::Border;
use super::host_conv::HostConv;
use super::weights::{Filter, FilterElement};
use crate::app::{DeviceInfo, DeviceKind, Kernel};
use crate::data::{HostRegions, XData};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::elementwise::EpilogueCode;
use crate::process::planning::Batch3;
use crate::process::planning::{index_type_for, run_options, run_width};
use num_complex::Complex64;

/// Work-items per group of `conv_direct` (consecutive outputs of one row).
const DIRECT_WG: usize = 64;
/// `conv_tiled`'s work-group: TX × TY work-items; each computes up to 4 outputs down a column.
const TILE_X: usize = 32;
const TILE_Y: usize = 8;
/// Local memory one tiled group may use: below the H100's 48 KiB so that two groups fit per multiprocessor.
const TILE_LOCAL_LIMIT: usize = 24 << 10;

/// The geometry of one correlation over the three trailing axes (z, y, x): lower-rank problems have extent 1
/// (filter, input and output) on the missing leading axes.
#[derive(Clone, Debug)]
pub(crate) struct Geometry {
    /// Filter extents, strides, dilations and starts per axis: input coordinate = o·stride + j·dilation − start.
    pub filter: [usize; 3],
    pub stride: [usize; 3],
    pub dilation: [usize; 3],
    pub start: [i64; 3],
    /// Whether the pass's filter holds a rank-1 filter's factors rather than its weights: the `fz·fy` products of
    /// the z and y factors, then the `fx` of x, applied one after the other by `conv_blocked` (`SEPARABLE`).
    pub factored: bool,
}

/// How a pass runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PassKernel {
    /// `conv_direct`.
    Direct,
    /// `conv_tiled` with RY outputs per work-item.
    Tiled { ry: usize },
    /// `conv_blocked` with VX × RY outputs per work-item.
    Blocked { vx: usize, ry: usize },
    /// On the host's threads, in the mapped buffers of a CPU device (`host_conv.rs`).
    Host,
}

/// The kernel a pass should use when it can: `Host` falls back to `Blocked` (not a CPU device, an output that
/// is not contiguous or shares the input's buffer), `Blocked` to `Tiled` (stride or dilation other than 1, a
/// filter too large to compile in, a tile too large for local memory), `Tiled` to `Direct`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PassPreference {
    Direct,
    Tiled,
    Blocked,
    Host,
}

/// `conv_blocked` compiles the filter extents in: up to this many taps along x and y (and 8 along z).
const BLOCK_MAX_TAPS: usize = 32;
/// Accumulators per work-item of `conv_blocked` (in real registers: complex counts twice), so that two
/// 256-item groups fit a multiprocessor's registers.
const BLOCK_MAX_ACC: usize = 64;
/// Filters up to this many rows have the row stream unrolled (every weight index known at compile time). H100,
/// 8192² f32, rolled → unrolled: 9×9 0.53 → 0.43 ms, 11×11 0.68 → 0.65, but 15×15 1.07 → 1.49 (code size);
/// 31×31 3.87 → 3.77 was not worth the compile time.
const BLOCK_UNROLL_ROWS: usize = 11;

pub(crate) struct ConvPass<T: Element, K: Element> {
    op: String,
    input: XData<T>,
    output: XData<T>,
    geo: [i32; 16],
    start: [i32; 4],
    st: [u64; 8],
    value: T,
    batch: Batch3,
    index: IndexType,
    /// The kernel and the weights on the device; `None` for an empty output or a pass on the host.
    kernel: Option<(Kernel, XData<K>)>,
    launch: LaunchShape,
    /// The pass on the host and the regions it maps.
    host: Option<HostPass<T, K>>,
    /// Element-wise stages computed in this pass's stores (a kernel pass only).
    epilogue: Option<EpilogueCode<T>>,
    work: (u64, u64),
}

#[derive(Clone, Copy)]
enum LaunchShape {
    Direct { x_blocks: u64, groups: u64, launch_groups: usize },
    Tiled { tiles: [u64; 2], groups: u64, launch_groups: usize, local_bytes: usize, ry: usize },
    Blocked { block: BlockShape, groups: u64, launch_groups: usize },
}

impl LaunchShape {
    /// The launch for outputs of spatial extents `o` (z, y, x) in `batch` images: `conv_blocked` when asked for
    /// and it fits, else `conv_tiled` when asked for and its tile fits local memory, else `conv_direct`. Pure
    /// given the device's facts, so the choice is unit-tested.
    fn choose<T: Element>(
        info: &DeviceInfo,
        g: &Geometry,
        o: [usize; 3],
        batch: u64,
        preference: PassPreference,
    ) -> LaunchShape {
        let element = std::mem::size_of::<T>();
        // Prefer tiles that leave room for two groups per multiprocessor; large filters may take all the local
        // memory (H100, 63×63 on 8192²: 102 ms through conv_direct when held to 24 KiB).
        let limits = [TILE_LOCAL_LIMIT.min(info.local_mem_bytes as usize), info.local_mem_bytes as usize];
        let blocked = match preference {
            PassPreference::Blocked | PassPreference::Host => block_shape::<T>(info, g, o, batch),
            _ => None,
        };
        let tiled = preference != PassPreference::Direct && blocked.is_none();
        let tiled_ry = if tiled && info.max_work_group_size >= TILE_X * TILE_Y {
            limits.into_iter().find_map(|limit| [4, 2, 1].into_iter().find(|&ry| tile_bytes(g, ry, element) <= limit))
        } else {
            None
        };
        let cpu = info.kind == DeviceKind::Cpu;
        // Groups launched at once by the tile kernels (they loop over the rest): a few per core on CPUs.
        let tile_cap = if cpu { info.compute_units as u64 * 4 } else { 1 << 22 };
        match (blocked, tiled_ry) {
            (Some(b), _) => {
                let groups = b.tiles.iter().product::<u64>() * batch;
                let launch_groups = groups.min(tile_cap) as usize;
                LaunchShape::Blocked { block: b, groups, launch_groups }
            }
            (None, Some(ry)) => {
                let tiles = [o[2].div_ceil(TILE_X) as u64, o[1].div_ceil(TILE_Y * ry) as u64];
                let groups = tiles[0] * tiles[1] * o[0] as u64 * batch;
                let (launch_groups, local_bytes) = (groups.min(tile_cap) as usize, tile_bytes(g, ry, element));
                LaunchShape::Tiled { tiles, groups, launch_groups, local_bytes, ry }
            }
            (None, None) => {
                let rows = batch as usize * o[0] * o[1];
                let x_blocks = o[2].div_ceil(DIRECT_WG) as u64;
                let groups = x_blocks * rows as u64;
                let cap = if cpu { info.compute_units as u64 * 16 } else { 1 << 22 };
                LaunchShape::Direct { x_blocks, groups, launch_groups: groups.min(cap) as usize }
            }
        }
    }

    /// Work-groups in all (the kernels loop over what one launch does not cover).
    fn groups(&self) -> u64 {
        match *self {
            LaunchShape::Direct { groups, .. }
            | LaunchShape::Tiled { groups, .. }
            | LaunchShape::Blocked { groups, .. } => groups,
        }
    }

    fn kernel_name(&self) -> &'static str {
        match self {
            LaunchShape::Blocked { .. } => "conv_blocked",
            LaunchShape::Tiled { .. } => "conv_tiled",
            LaunchShape::Direct { .. } => "conv_direct",
        }
    }
}

/// Local memory of a `conv_tiled` group computing `ry` outputs per work-item: the input tile and its halo.
fn tile_bytes(g: &Geometry, ry: usize, element: usize) -> usize {
    let lw = (TILE_X - 1) * g.stride[2] + (g.filter[2] - 1) * g.dilation[2] + 1;
    let lh = (TILE_Y * ry - 1) * g.stride[1] + (g.filter[1] - 1) * g.dilation[1] + 1;
    lw * lh * element
}

/// An error when a coordinate the kernels form could pass an int (they index spatial axes in 32 bits).
fn check_reach<T: Element>(
    op: &str,
    input: &XData<T>,
    output: &XData<T>,
    n: [usize; 3],
    o: [usize; 3],
    g: &Geometry,
) -> Result<()> {
    let per_axis = o.iter().zip(&n).zip(g.filter.iter().zip(&g.stride)).zip(g.dilation.iter().zip(&g.start));
    let reach = per_axis
        .map(|(((&o, &n), (&filter, &stride)), (&dilation, &start))| {
            let far = o.saturating_sub(1) as i128 * stride as i128 + (filter as i128 - 1) * dilation as i128;
            far.max(n as i128) + start.unsigned_abs() as i128
        })
        .max()
        .unwrap_or(0);
    if reach >= i32::MAX as i128 {
        return Err(Error::Unsupported {
            what: format!(
                "{op}: coordinates reach {reach} along a spatial axis (input {:?}, output {:?}); the kernels index \
                 spatial axes with 32-bit integers",
                input.shape(),
                output.shape()
            ),
        });
    }
    Ok(())
}

/// The shape of a `conv_blocked` launch: outputs per work-item (VX along x, RY along y), output planes per
/// group, and whether it fits (local memory, registers, compiled-in filter size).
#[derive(Clone, Copy, Debug)]
struct BlockShape {
    vx: usize,
    ry: usize,
    rz: usize,
    tiles: [u64; 3],
    /// Work-items per group along x and y (TX, TY).
    group: [usize; 2],
}

/// `conv_blocked`'s work-groups, TX × TY work-items: wide ones first (the shape tuned on large images), square ones
/// for images whose rows a 32-item group would leave partly idle.
const BLOCK_GROUPS: [[usize; 2]; 2] = [[TILE_X, TILE_Y], [16, 16]];

fn block_shape<T: Element>(info: &DeviceInfo, g: &Geometry, o: [usize; 3], batch: u64) -> Option<BlockShape> {
    let unit = g.stride == [1; 3] && g.dilation == [1; 3];
    let [fz, fy, fx] = g.filter;
    if !unit || fx > BLOCK_MAX_TAPS || fy > BLOCK_MAX_TAPS || fz > 8 {
        return None;
    }
    let element = std::mem::size_of::<T>();
    let vw = run_width::<T>();
    let vx = vw;
    let reals = element / std::mem::size_of::<T::Real>();
    // Local memory: at most 48 KiB, the most one OpenCL group may hold on NVIDIA.
    let limit = (48 << 10).min(info.local_mem_bytes as usize);
    let local = |[tx, ty]: [usize; 2], ry: usize| (tx * vx + fx - 1).div_ceil(vw) * vw * (ty * ry + fy - 1) * element;
    // Volumes take one row per work-item: their ring of accumulators and the plane fetched ahead need the
    // registers (H100, 3×3×3 on 512³, 16–32 planes per group: 0.62 ms with 1 row, 0.75 with 2, 0.84 with 4).
    let most_rows = if fz > 1 { 1 } else { 8 };
    let fits = |group: [usize; 2], ry: usize| {
        ry <= most_rows
            && info.max_work_group_size >= group[0] * group[1]
            && local(group, ry) <= limit
            && fz * ry * vx * reals <= BLOCK_MAX_ACC
    };
    let cheapest = |rows: &[usize]| {
        BLOCK_GROUPS
            .into_iter()
            .flat_map(|group| rows.iter().map(move |&ry| (group, ry)))
            .filter(|&(group, ry)| fits(group, ry))
            .min_by(|a, b| block_cost(g, o, vx, *a).total_cmp(&block_cost(g, o, vx, *b)))
    };
    // Planes take one row per work-item only when no more fit: with one, a 16 × 16 group's staging outweighed
    // what it saved (H200, 3×3 on 1000 × 272²: 0.78 ms against 0.58 in 32 × 8 groups of 8 rows).
    let (group, ry) = cheapest(&[8, 4, 2]).or_else(|| cheapest(&[1]))?;
    let tiles_xy = [o[2].div_ceil(group[0] * vx) as u64, o[1].div_ceil(group[1] * ry) as u64];
    // Output planes per group: long runs read each input plane once for FZ outputs, but enough groups must
    // remain to fill the device (4 per compute unit).
    let per_plane = tiles_xy[0] * tiles_xy[1] * batch;
    let want = 4 * info.compute_units as u64;
    let mut rz = if fz == 1 { 1 } else { o[0].min(32) };
    while rz > 1 && per_plane * (o[0].div_ceil(rz) as u64) < want {
        rz /= 2;
    }
    let rz = rz.max(1);
    Some(BlockShape { vx, ry, rz, tiles: [tiles_xy[0], tiles_xy[1], o[0].div_ceil(rz) as u64], group })
}

/// What a plane of `conv_blocked` outputs `o` costs in `group` × `ry` tiles, in staged input elements: every tile
/// stages its outputs' input with the halo, and computes all its outputs, those past the image's edge too (a
/// multiply-add counted as 1/16 of a staged element: the H200 streams about 1.2·10⁹ elements and does 3.3·10¹⁰
/// multiply-adds per ms). Ties go to the first shape tried.
fn block_cost(g: &Geometry, o: [usize; 3], vx: usize, (group, ry): ([usize; 2], usize)) -> f64 {
    let [fz, fy, fx] = g.filter;
    let (cols, rows) = (group[0] * vx, group[1] * ry);
    let tiles = (o[2].div_ceil(cols) * o[1].div_ceil(rows)) as f64;
    let macs = if g.factored { factored_macs(g.filter, ry) } else { (fz * fy * fx) as f64 };
    tiles * (((cols + fx - 1) * (rows + fy - 1)) as f64 + (cols * rows) as f64 * macs / 16.0)
}

/// Multiply-adds per output when `conv_blocked` applies a rank-1 filter's factors one after the other (the
/// [`Geometry::factored`] pass): each of the `ry + fy − 1` rows a work-item streams for its `ry` output rows is
/// filtered along x once (`fx`), then added into the outputs it touches (`fy·fz`). `None` when `conv_blocked`
/// does not take the geometry (a stride or dilation, a filter too large to compile in, a tile too large).
pub(crate) fn fused_separable_macs<T: Element>(
    info: &DeviceInfo,
    g: &Geometry,
    o: [usize; 3],
    batch: u64,
) -> Option<f64> {
    block_shape::<T>(info, g, o, batch).map(|b| factored_macs(g.filter, b.ry))
}

/// Multiply-adds per output of the factors' pass over `filter` extents with `ry` output rows per work-item.
fn factored_macs(filter: [usize; 3], ry: usize) -> f64 {
    let [fz, fy, fx] = filter.map(|f| f as f64);
    let ry = ry as f64;
    fx * (ry + fy - 1.0) / ry + fy * fz
}

/// A pass on the host, with the regions it maps.
type HostPass<T, K> = (HostConv<T, K>, HostRegions);

/// The pass on the host when it applies — a filter along one axis, a CPU device, a non-empty input, and a
/// contiguous non-empty output in a buffer of its own — with the mapped regions of the input and the output. `extents` are the input's spatial
/// extents and strides, `o` the output's spatial extents.
#[allow(clippy::too_many_arguments)]
fn host_pass<T: Element, K: Element>(
    input: &XData<T>,
    output: &XData<T>,
    extents: [[usize; 3]; 2],
    o: [usize; 3],
    filter: &Filter<K>,
    g: &Geometry,
    batch: &Batch3,
    border: Border,
    value: T,
) -> Option<HostPass<T, K>> {
    // Filters along one axis only (separable passes, 1-D filters): for 2-D and 3-D filters the kernels stay ahead
    // once compiled (PoCL, 1024² f32: 3×3 2.2 ms in conv_blocked, 4.9 on the host; 15×15 12.8 against 34.7).
    let one_axis = g.filter.iter().filter(|&&f| f > 1).count() <= 1;
    // The host's multiply-adds take every tap: a filter that leaves zero taps out runs in the kernel.
    let applies = one_axis && !filter.leaves_taps_out();
    let regions = HostRegions::for_pass(input, output).filter(|_| applies)?;
    let batch_starts = batch.offsets([regions.input_start(input), 0, 0]).into_iter().map(|[i, _, _]| i).collect();
    let [n, in_strides] = extents;
    let host = HostConv {
        n,
        in_strides,
        batch_starts,
        o,
        filter: g.filter,
        stride: g.stride,
        dilation: g.dilation,
        start: g.start,
        weights: filter.values().to_vec(),
        border,
        value,
    };
    Some((host, regions))
}

/// Three axes for a problem of up to three: `values` (one per axis, in order) in the trailing slots, `fill` in
/// the leading ones.
pub(crate) fn trailing3<V: Copy>(values: impl DoubleEndedIterator<Item = V>, fill: V) -> [V; 3] {
    let mut axes = [fill; 3];
    for (slot, v) in axes.iter_mut().rev().zip(values.rev()) {
        *slot = v;
    }
    axes
}

/// `(extent, stride)` of the three trailing axes of `x` treated as `rank` spatial axes (1s before).
fn spatial<T: Element>(op: &str, x: &XData<T>, rank: usize) -> Result<([usize; 3], [usize; 3])> {
    if rank > 3 || rank > x.ndim() {
        return Err(Error::invalid(
            op,
            format!("{rank} spatial axes in an array of shape {:?}: at most 3, and at most its rank", x.shape()),
        ));
    }
    let lead = x.ndim() - rank;
    Ok((trailing3(x.shape().iter().skip(lead).copied(), 1), trailing3(x.strides().iter().skip(lead).copied(), 0)))
}

impl<T: Element, K: FilterElement<T>> ConvPass<T, K> {
    /// A pass from `input` to `output`, whose last `rank` axes are the spatial ones and whose leading axes (the
    /// same extents in both) form the batch. `filter` has 3 axes (1s where the problem has fewer). `tiled` asks
    /// for the local-memory kernel, which is used when the device's local memory holds its tile. `epilogue`:
    /// element-wise stages to compute where this pass stores its output, which a kernel pass takes
    /// ([`ConvPass::has_epilogue`]) and a pass on the host leaves.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        op: &str,
        input: &XData<T>,
        output: &XData<T>,
        rank: usize,
        filter: &Filter<K>,
        geometry: &Geometry,
        border: Border,
        value: Complex64,
        preference: PassPreference,
        epilogue: Option<EpilogueCode<T>>,
    ) -> Result<ConvPass<T, K>> {
        let app = output.app();
        let info = app.device();
        let ((n, in_st), (o, out_st)) = (spatial(op, input, rank)?, spatial(op, output, rank)?);
        let g = geometry;
        check_reach(op, input, output, n, o, g)?;
        let lead = input.ndim() - rank;
        let (Some(batch_shape), Some(in_batch), Some(out_batch)) =
            (input.shape().get(..lead), input.strides().get(..lead), output.strides().get(..lead))
        else {
            return Err(Error::invalid(
                op,
                format!("the input {:?} and output {:?} do not share {lead} batch axes", input.shape(), output.shape()),
            ));
        };
        let batch = Batch3::new(op, batch_shape, [in_batch, out_batch, &vec![0; lead]])?;
        // Input extents, output extents, filter extents, strides and dilations, three each; the last is unused.
        let mut geo = [0i32; 16];
        for (slots, values) in geo.chunks_exact_mut(3).zip([n, o, g.filter, g.stride, g.dilation]) {
            for (slot, v) in slots.iter_mut().zip(values) {
                *slot = v as i32;
            }
        }
        let start = [g.start[0] as i32, g.start[1] as i32, g.start[2] as i32, 0];
        let st = [in_st[0], in_st[1], in_st[2], out_st[0], out_st[1], out_st[2], 0, 0].map(|v| v as u64);
        let element = std::mem::size_of::<T>();
        let launch = LaunchShape::choose::<T>(info, g, o, batch.count(), preference);
        if g.factored && !matches!(launch, LaunchShape::Blocked { .. }) {
            return Err(Error::Unsupported {
                what: format!(
                    "{op}: a filter's factors in one pass need conv_blocked, which does not take filter {:?} with \
                     strides {:?} and dilations {:?}",
                    g.filter, g.stride, g.dilation
                ),
            });
        }
        let host = if preference == PassPreference::Host {
            host_pass(input, output, [n, in_st], o, filter, g, &batch, border, T::from_c64(value))
        } else {
            None
        };
        // On CPU devices where the planner chooses, the stages run after the passes: PoCL's vectorised conv_blocked
        // ran 2048² Laplacian + threshold in 9.0–11.3 ms with the threshold in its stores, against 6.4–8.7 ms
        // for the convolution and a separate element-wise kernel (2 cores, same runs).
        let planner_on_cpu = info.kind == DeviceKind::Cpu && preference == PassPreference::Host;
        let epilogue = epilogue.filter(|_| host.is_none() && !output.is_empty() && !planner_on_cpu);
        let mut layouts = vec![input.layout(), output.layout()];
        layouts.extend(epilogue.iter().flat_map(|e| e.layouts()));
        let index = index_type_for(&layouts, &[launch.groups()]);
        let filter_bytes = std::mem::size_of_val(filter.values());
        // 64 KiB is the least constant memory OpenCL guarantees.
        let space = if filter_bytes <= 64 << 10 { "__constant" } else { "__global" };
        let unit_x = u8::from(in_st[2] == 1 && out_st[2] == 1);
        let mut options = format!(
            "{} -DK={} -DK_COMPLEX={} -DIDX={} {} -DFILTER_SPACE={space} -DUNIT_X={unit_x} -DWG={DIRECT_WG}",
            T::build_options(),
            K::CL_TYPE,
            u8::from(K::IS_COMPLEX),
            index.cl_type(),
            border.build_option()
        );
        if filter.leaves_taps_out() {
            options += " -DSKIP_ZERO_TAPS=1";
        }
        match launch {
            LaunchShape::Tiled { ry, .. } => options += &format!(" -DTX={TILE_X} -DTY={TILE_Y} -DRY={ry}"),
            LaunchShape::Blocked { block: BlockShape { vx, ry, group: [tx, ty], .. }, .. } => {
                let vw = run_width::<T>();
                let aligned = out_st[2] == 1
                    && [output.offset(), out_st[0], out_st[1]].iter().all(|v| v.is_multiple_of(vw))
                    && batch.strides[1].iter().take(batch.axes as usize).all(|&v| (v as usize).is_multiple_of(vw));
                let [fz, fy, fx] = g.filter;
                options += &format!(
                    " -DTX={tx} -DTY={ty} -DRY={ry} -DBLOCK_VX={vx} -DKX={fx} -DKY={fy} -DKZ={fz}{} \
                     -DALIGNED_OUT={} -DUNROLL_ROWS={}",
                    run_options::<T>(),
                    u8::from(aligned),
                    u8::from(fy <= BLOCK_UNROLL_ROWS)
                );
                if g.factored {
                    options += " -DSEPARABLE=1";
                }
                if epilogue.as_ref().is_some_and(|e| e.stores_runs(vw)) {
                    options += " -DEPILOGUE_RUNS=1";
                }
            }
            LaunchShape::Direct { .. } => {}
        }
        let kernel = if output.is_empty() || host.is_some() {
            None
        } else {
            let source = EpilogueCode::program_source(epilogue.as_ref(), kernels::FILTER);
            let program = app.build_program("filter.cl", &source, &options)?;
            let weights = XData::from_slice(app, filter.shape(), filter.values())?;
            Some((program.kernel(launch.kernel_name())?.owned_by(op), weights))
        };
        let taps = match launch {
            LaunchShape::Blocked { block, .. } if g.factored => factored_macs(g.filter, block.ry).ceil() as u64,
            _ => filter.values().len() as u64,
        };
        let outputs = output.len() as u64;
        let per_tap = match (T::IS_COMPLEX, K::IS_COMPLEX) {
            (true, true) => 8,
            (true, false) => 4,
            _ => 2,
        };
        let work = ((input.len() + output.len()) as u64 * element as u64, outputs * taps * per_tap);
        Ok(ConvPass {
            op: op.to_string(),
            input: input.clone(),
            output: output.clone(),
            geo,
            start,
            st,
            value: T::from_c64(value),
            batch,
            index,
            kernel,
            launch,
            host,
            epilogue,
            work,
        })
    }

    /// Whether this pass computes the element-wise stages it was given in its stores.
    pub(crate) fn has_epilogue(&self) -> bool {
        self.epilogue.is_some()
    }

    pub(crate) fn kernel_kind(&self) -> PassKernel {
        if self.host.is_some() {
            return PassKernel::Host;
        }
        match self.launch {
            LaunchShape::Direct { .. } => PassKernel::Direct,
            LaunchShape::Tiled { ry, .. } => PassKernel::Tiled { ry },
            LaunchShape::Blocked { block, .. } => PassKernel::Blocked { vx: block.vx, ry: block.ry },
        }
    }

    pub(crate) fn launch(&mut self) -> Result<()> {
        if let Some((host, regions)) = &self.host {
            return regions
                .run(&self.op, "host_conv", &self.input, &self.output, self.work, false, |x, y| host.run(x, y));
        }
        let Some((kernel, weights)) = self.kernel.as_mut() else { return Ok(()) };
        let (idx, b) = (self.index, self.batch);
        let l = kernel
            .launch()
            .input("src", &self.input)
            .index("src_off", idx, self.input.offset() as u64)
            .output("dst", &self.output)
            .index("dst_off", idx, self.output.offset() as u64)
            .input("w", weights)
            .scalar("geo", self.geo)
            .scalar("start", self.start)
            .scalar("st", self.st)
            .scalar("value", self.value)
            .scalar("nd", b.axes)
            .scalar("b_shape", b.shape)
            .scalar("b_src", b.strides[0])
            .scalar("b_dst", b.strides[1]);
        let (l, global, local) = match self.launch {
            LaunchShape::Direct { x_blocks, groups, launch_groups } => {
                (l.index("x_blocks", idx, x_blocks).index("groups", idx, groups), launch_groups * DIRECT_WG, DIRECT_WG)
            }
            LaunchShape::Tiled { tiles, groups, launch_groups, local_bytes, .. } => (
                l.index("tiles_x", idx, tiles[0])
                    .index("tiles_y", idx, tiles[1])
                    .index("groups", idx, groups)
                    .local_memory("tile", local_bytes),
                launch_groups * TILE_X * TILE_Y,
                TILE_X * TILE_Y,
            ),
            LaunchShape::Blocked { block: BlockShape { tiles, rz, group: [tx, ty], .. }, groups, launch_groups } => (
                l.index("tiles_x", idx, tiles[0])
                    .index("tiles_y", idx, tiles[1])
                    .index("z_blocks", idx, tiles[2])
                    .index("groups", idx, groups)
                    .scalar("rz", rz as i32),
                launch_groups * tx * ty,
                tx * ty,
            ),
        };
        let l = match &self.epilogue {
            Some(e) => e.set_args(l, idx),
            None => l,
        };
        l.global(&[global]).local(&[local]).work(self.work.0, self.work.1).enqueue()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geometry(filter: [usize; 3], stride: usize) -> Geometry {
        Geometry { filter, stride: [1, stride, stride], dilation: [1; 3], start: [0; 3], factored: false }
    }

    #[test]
    fn small_filters_take_conv_blocked_and_strided_ones_the_tiles() {
        let gpu = DeviceInfo::for_tests(DeviceKind::Gpu);
        let shape =
            LaunchShape::choose::<f32>(&gpu, &geometry([1, 3, 3], 1), [1, 8192, 8192], 1, PassPreference::Blocked);
        let LaunchShape::Blocked { block: BlockShape { vx, ry, .. }, groups, .. } = shape else {
            panic!("3×3 should block")
        };
        assert_eq!((vx, ry), (4, 8)); // 4 × 8 outputs per work-item for f32 images
        assert_eq!(groups, (8192u64 / (32 * 4)) * (8192 / (8 * 8)));
        // Passes that would rather run on the host take the same kernel where they cannot (2-D filters, GPUs).
        let host = LaunchShape::choose::<f32>(&gpu, &geometry([1, 3, 3], 1), [1, 8192, 8192], 1, PassPreference::Host);
        assert!(
            matches!(host, LaunchShape::Blocked { block: BlockShape { vx: 4, ry: 8, .. }, .. }),
            "{}",
            host.kernel_name()
        );
        // A stride leaves the blocked kernel: tiles, with their halo in local memory.
        let strided =
            LaunchShape::choose::<f32>(&gpu, &geometry([1, 3, 3], 2), [1, 512, 512], 1, PassPreference::Blocked);
        assert!(matches!(strided, LaunchShape::Tiled { ry: 4, .. }));
        // Filters too large for any tile of local memory run direct.
        let huge = LaunchShape::choose::<f32>(&gpu, &geometry([1, 301, 301], 1), [1, 64, 64], 1, PassPreference::Tiled);
        assert!(matches!(huge, LaunchShape::Direct { .. }), "{}", huge.kernel_name());
    }

    #[test]
    fn factors_in_one_pass_cost_what_the_planner_weighs() {
        let gpu = DeviceInfo::for_tests(DeviceKind::Gpu);
        let factored = |f: usize, stride: usize| Geometry { factored: true, ..geometry([1, f, f], stride) };
        let macs =
            |f: usize, stride: usize| fused_separable_macs::<f32>(&gpu, &factored(f, stride), [1, 8192, 8192], 1);
        // 8 rows per work-item on a large image while the tile fits 48 KiB: fx·(8 + f − 1)/8 + f.
        assert_eq!(macs(5, 1), Some(5.0 * 12.0 / 8.0 + 5.0));
        assert_eq!(macs(13, 1), Some(13.0 * 20.0 / 8.0 + 13.0));
        assert_eq!(macs(17, 1), Some(17.0 * 24.0 / 8.0 + 17.0));
        // 25 rows: (128 + 24) × (64 + 24) f32 pass 48 KiB, so 4 rows per work-item.
        assert_eq!(macs(25, 1), Some(25.0 * 28.0 / 4.0 + 25.0));
        assert_eq!(macs(5, 2), None, "a stride leaves conv_blocked");
        assert_eq!(macs(33, 1), None, "33 taps are past what conv_blocked compiles in");
        // A volume: one row per work-item, so every row is filtered along x for each output row.
        let cube = Geometry { factored: true, ..geometry([3, 3, 3], 1) };
        assert_eq!(fused_separable_macs::<f32>(&gpu, &cube, [40, 40, 40], 1), Some(3.0 * 3.0 + 3.0 * 3.0));
    }

    #[test]
    fn small_images_take_square_groups() {
        let gpu = DeviceInfo::for_tests(DeviceKind::Gpu);
        let shape = |f: [usize; 3], o: [usize; 3]| {
            let b = block_shape::<f32>(&gpu, &geometry(f, 1), o, 1).unwrap();
            (b.group, b.ry)
        };
        // 272 columns leave a third of a 128-column tile idle; 64-column tiles of 2 rows per item fit them better.
        assert_eq!(shape([1, 3, 3], [1000, 272, 272]), ([16, 16], 2));
        // 200 columns fill 128- and 64-column tiles alike (78 %): the wide groups, with 16-row tiles (200 = 13 × 16
        // − 8) rather than 64-row ones (256).
        assert_eq!(shape([1, 3, 3], [1, 200, 200]), ([32, 8], 2));
        // Rows that 128-column tiles fill, and large images: the wide groups of 8 rows per item.
        assert_eq!(shape([1, 3, 3], [1000, 256, 256]), ([32, 8], 8));
        assert_eq!(shape([1, 15, 15], [1, 8192, 8192]), ([32, 8], 8));
        // Volumes: one row per item either way; square groups stage less halo per plane.
        assert_eq!(shape([3, 3, 3], [512, 512, 512]), ([16, 16], 1));
        // Each choice's tile fits: the cost model never trades the limits away.
        let g = geometry([1, 31, 31], 1);
        let b = block_shape::<Complex64>(&gpu, &g, [1, 300, 300], 1).unwrap();
        let [tx, ty] = b.group;
        assert!((tx * b.vx + 30) * (ty * b.ry + 30) * 16 <= 48 << 10);
    }

    #[test]
    fn tiles_fit_the_local_memory_they_claim() {
        let gpu = DeviceInfo::for_tests(DeviceKind::Gpu);
        for f in [3, 15, 31, 63] {
            let g = geometry([1, f, f], 1);
            if let LaunchShape::Tiled { local_bytes, ry, .. } =
                LaunchShape::choose::<f32>(&gpu, &g, [1, 1000, 1000], 1, PassPreference::Tiled)
            {
                assert!(local_bytes <= 48 << 10 && local_bytes == tile_bytes(&g, ry, 4), "{f}×{f}");
            }
        }
        // CPUs launch a few looping groups per core.
        let cpu = DeviceInfo::for_tests(DeviceKind::Cpu);
        let direct =
            LaunchShape::choose::<f64>(&cpu, &geometry([1, 5, 5], 3), [1, 999, 999], 1, PassPreference::Direct);
        let LaunchShape::Direct { launch_groups, .. } = direct else { panic!("asked for direct") };
        assert_eq!(launch_groups, 2 * 16);
    }
}

//! The plans both interpolating processes make in `init` and their launches: the prefilter, then a copy, one
//! separable pass per interpolated axis (`resample_axis`) or one gather over the output (`resample_gather`).
//! Kernels: `kernels/resample.cl`.

use super::interpolation::{Interpolation, ResampleStrategy};
use super::mode::InterpMode;
use super::spline_filter::Prefilter;
use crate::app::Kernel;
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::Process;
use crate::process::elementwise::Elementwise;
use crate::process::planning::{EXTENTS, X_STRIDES, Y_STRIDES, array_view, index_type_for, indices};

/// Work-items per group of the interpolation kernels (a 1-D range over the output).
const GROUP: usize = 256;

/// One separable interpolation pass.
pub(super) struct AxisPass<T: Element> {
    pub(super) source: XData<T>,
    pub(super) target: XData<T>,
    pub(super) slot: usize,
    pub(super) n_in: usize,
    pub(super) table: XData<T::Real>,
    pub(super) source_view: ([usize; 4], [usize; 4]),
    pub(super) target_view: ([usize; 4], [usize; 4]),
}

/// The gather: one kernel over the output.
pub(super) struct Gather<T: Element> {
    pub(super) kernel: Kernel,
    pub(super) source: XData<T>,
    pub(super) target: XData<T>,
    pub(super) source_view: ([usize; 4], [usize; 4]),
    pub(super) target_view: ([usize; 4], [usize; 4]),
    pub(super) matrix: [f64; 12],
    pub(super) pad: f64,
    pub(super) coordinates: Option<XData<T::Real>>,
    pub(super) coordinate_stride: usize,
    pub(super) double: bool,
    pub(super) index: IndexType,
    pub(super) mode: InterpMode,
}

/// The interpolation after the prefilter.
pub(super) enum Work<T: Element> {
    Copy(Box<Elementwise<T, T>>),
    Separable { kernel: Kernel, passes: Vec<AxisPass<T>> },
    Gather(Box<Gather<T>>),
}

/// What `init` planned: the prefilter, then the interpolation.
pub(super) struct Plan<T: Element> {
    pub(super) prefilter: Prefilter<T>,
    pub(super) work: Work<T>,
    pub(super) index: IndexType,
    pub(super) cval: T,
    pub(super) strategy: ResampleStrategy,
}

/// The build options of the resampling program: type, index type and order (plus `extra`). The mode is a
/// run-time argument, so one program serves every mode, and the prefilter and the separable passes share it.
pub(super) fn build_options<T: Element>(order: usize, index: IndexType, extra: &str) -> String {
    format!("{} -DIDX={} -DORDER={order}{extra}", T::build_options(), index.cl_type())
}

/// The first block axis (of the last three) from which every axis is interpolated or passed through, given the
/// axes that are interpolated; an error when they span more than three.
pub(super) fn block_rank(op: &str, ndim: usize, interpolated: &[bool]) -> Result<usize> {
    let first = interpolated.iter().position(|&i| i).unwrap_or(ndim);
    let rank = ndim - first;
    if rank > 3 {
        return Err(Error::Unsupported {
            what: format!(
                "{op} interpolating axes {first} to {} of {ndim}: at most the last three axes can be interpolated",
                ndim - 1
            ),
        });
    }
    Ok(rank)
}

/// Builds the gather over `coefficients` (the whole `rank`-axis block: `pass[k]` true where block axis k is not
/// interpolated) into `target`.
#[allow(clippy::too_many_arguments)]
pub(super) fn plan_gather<T: Element>(
    op: &str,
    coefficients: &XData<T>,
    target: &XData<T>,
    target_view: ([usize; 4], [usize; 4]),
    rank: usize,
    pass: [bool; 3],
    matrix: [f64; 12],
    coordinates: Option<(&XData<T::Real>, usize)>,
    interp: &Interpolation,
) -> Result<Gather<T>> {
    let app = coefficients.app().clone();
    let source_view = array_view(op, coefficients, rank)?;
    let mut layouts = vec![coefficients.layout(), target.layout()];
    if let Some((c, _)) = coordinates {
        layouts.push(c.layout());
    }
    let index = index_type_for(&layouts, &[]);
    let double = app.device().fp64;
    let extra = format!(
        " -DCOORD={} -DCOORD_DOUBLE={} -DMAP_COORDS={} -DPASS_Z={} -DPASS_Y={} -DPASS_X={}",
        if double { "double" } else { "float" },
        u8::from(double),
        u8::from(coordinates.is_some()),
        u8::from(pass[0]),
        u8::from(pass[1]),
        u8::from(pass[2])
    );
    let options = build_options::<T>(interp.order, index, &extra);
    let program = app.build_program("resample.cl", &kernels::with_common(kernels::RESAMPLE), &options)?;
    let kernel = program.kernel("resample_gather")?.owned_by(op);
    let pad = interp.pad() as f64;
    Ok(Gather {
        kernel,
        source: coefficients.clone(),
        target: target.clone(),
        source_view,
        target_view,
        matrix,
        pad,
        coordinates: coordinates.map(|(c, _)| c.clone()),
        coordinate_stride: coordinates.map_or(0, |(_, s)| s),
        double,
        index,
        mode: interp.mode,
    })
}

/// Enqueues the gather: every output element's taps around its mapped coordinate.
fn launch_gather<T: Element>(g: &mut Gather<T>, cval: T) -> Result<()> {
    let ((se, sx), (e, sy)) = (g.source_view, g.target_view);
    let rows = e.iter().take(3).product::<usize>();
    let nx = e.get(3).copied().unwrap_or(1);
    if rows * nx == 0 {
        return Ok(());
    }
    let idx = g.index;
    let mut l = g.kernel.launch().input("x", &g.source).index("x0", idx, g.source.offset() as u64);
    l = indices(l, idx, X_STRIDES, &sx);
    l = indices(l, idx, ["inz", "iny", "inx"], &se[1..]);
    l = l.output("y", &g.target).index("y0", idx, g.target.offset() as u64);
    l = indices(l, idx, Y_STRIDES, &sy);
    l = indices(l, idx, EXTENTS, &e);
    l = match &g.coordinates {
        Some(c) => l.input("coords", c).index("cstride", idx, g.coordinate_stride as u64),
        // An unused argument still needs a buffer: the source stands in.
        None => l.input("coords", &g.source).index("cstride", idx, 0),
    };
    const MATRIX: [&str; 12] = ["m00", "m01", "m02", "m10", "m11", "m12", "m20", "m21", "m22", "o0", "o1", "o2"];
    for (name, v) in MATRIX.into_iter().zip(g.matrix) {
        l = if g.double { l.scalar(name, v) } else { l.scalar(name, v as f32) };
    }
    l = if g.double { l.scalar("pad", g.pad) } else { l.scalar("pad", g.pad as f32) };
    let outputs = (rows * nx) as u64;
    l.scalar("cval", cval)
        .scalar("mode", g.mode.code())
        .scalar("tap_mode", g.mode.tap_mode().code())
        .global(&[(rows * nx).div_ceil(GROUP) * GROUP])
        .local(&[GROUP])
        .work(outputs * 2 * std::mem::size_of::<T>() as u64, 0)
        .enqueue()
}

impl<T: Element> Plan<T> {
    /// Enqueues the prefilter and the interpolation, with boundary `mode`.
    pub(super) fn launch(&mut self, mode: InterpMode) -> Result<()> {
        self.prefilter.launch()?;
        match &mut self.work {
            Work::Copy(copy) => copy.launch(),
            Work::Gather(g) => launch_gather(g, self.cval),
            Work::Separable { kernel, passes } => {
                for pass in passes.iter() {
                    launch_pass(kernel, pass, self.index, self.cval, mode)?;
                }
                Ok(())
            }
        }
    }
}

/// Enqueues one separable pass: every output row of the pass's axis from the taps its table lists.
fn launch_pass<T: Element>(
    kernel: &mut Kernel,
    pass: &AxisPass<T>,
    idx: IndexType,
    cval: T,
    mode: InterpMode,
) -> Result<()> {
    let ((_, sx), (e, sy)) = (pass.source_view, pass.target_view);
    let rows = e.iter().take(3).product::<usize>();
    let nx = e.get(3).copied().unwrap_or(1);
    if rows * nx == 0 {
        return Ok(());
    }
    let mut l = kernel.launch().input("x", &pass.source).index("x0", idx, pass.source.offset() as u64);
    l = indices(l, idx, X_STRIDES, &sx);
    l = l.output("y", &pass.target).index("y0", idx, pass.target.offset() as u64);
    l = indices(l, idx, Y_STRIDES, &sy);
    l = indices(l, idx, EXTENTS, &e);
    let outputs = (rows * nx) as u64;
    let reads = pass.source.len() as u64;
    l.scalar("axis", pass.slot as i32 - 1)
        .index("n_in", idx, pass.n_in as u64)
        .input("table", &pass.table)
        .scalar("cval", cval)
        .scalar("mode", mode.code())
        .scalar("tap_mode", mode.tap_mode().code())
        .global(&[(rows * nx).div_ceil(GROUP) * GROUP])
        .local(&[GROUP])
        .work((outputs + reads) * std::mem::size_of::<T>() as u64, 0)
        .enqueue()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::ClApp;
    use num_complex::Complex64;

    /// The resampling program builds without compiler warnings in the variants the processes build: float and
    /// double, real and complex, the separable passes, and the gathers (affine and coordinate arrays, axes passed
    /// through, coordinates in float64).
    #[test]
    fn the_program_builds_without_warnings() {
        // Compiled from source every time: a program from the disk cache has no compiler log.
        let app = ClApp::builder().use_env(true).program_cache(None).build().unwrap();
        let source = kernels::with_common(kernels::RESAMPLE);
        let gather = |d: u8, map: u8, pass: u8| {
            let coord = if d == 1 { "double" } else { "float" };
            format!(" -DCOORD={coord} -DCOORD_DOUBLE={d} -DMAP_COORDS={map} -DPASS_Z={pass} -DPASS_Y=0 -DPASS_X=0")
        };
        let double = app.device().fp64;
        for (options, needs_double) in [
            (build_options::<f32>(3, IndexType::U32, ""), false),
            (build_options::<f32>(0, IndexType::U64, &gather(0, 1, 1)), false),
            (build_options::<f32>(5, IndexType::U32, &gather(u8::from(double), 0, 0)), false),
            (build_options::<f64>(4, IndexType::U32, &gather(1, 1, 0)), true),
            (build_options::<Complex64>(2, IndexType::U32, &gather(1, 0, 1)), true),
        ] {
            if needs_double && !double {
                continue;
            }
            let program = app.build_program("resample.cl", &source, &options).unwrap();
            // NVIDIA's compiler (driver 580) notes for every kernel of every program, a one-line empty kernel
            // included, that it "is a kernel, so overriding noinline attribute": not about our source.
            let log = program.build_log().unwrap();
            let ours: Vec<&str> = log
                .lines()
                .filter(|l| l.to_lowercase().contains("warning") && !l.contains("is a kernel, so overriding noinline"))
                .collect();
            assert!(ours.is_empty(), "{options}:\n{log}");
        }
    }
}

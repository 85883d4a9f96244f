//! The planner behind [`super::CoilSum`] and [`super::RSoS`]: `coil_reduce` in `kernels/mri.cl` over
//! `[frames, coils, positions]`, where the frame axes and the spatial axes of each array are merged into one
//! axis each. Arrays whose axes do not merge (transposed or sliced views) are gathered into contiguous scratch
//! in `init` and copied there at each launch (the output the other way).

use crate::app::Kernel;
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::layout::CopyPlan;
use crate::process::planning::index_type_for;

/// `Σ_c x`, `Σ_c x·conj(maps)` or `√Σ_c |x|²`, as `kernels/mri.cl` numbers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CoilMode {
    Sum = 0,
    ConjSum = 1,
    Rsos = 2,
}

/// Axes with extents `shape` and `strides` as one axis (extent, stride), if every neighbour pair is gap-free.
fn merged(shape: &[usize], strides: &[usize]) -> Option<(usize, usize)> {
    let n = shape.iter().product();
    let axes: Vec<(usize, usize)> =
        shape.iter().zip(strides).filter(|(e, _)| **e != 1).map(|(e, s)| (*e, *s)).collect();
    let Some(&(_, last)) = axes.last() else { return Some((n, 1)) };
    axes.iter().zip(axes.iter().skip(1)).all(|(&(_, outer), &(e, s))| outer == e * s).then_some((n, last))
}

/// An array as seen by the kernel: the array read or written directly, or contiguous scratch with a copy.
struct Operand<T: Element> {
    scratch: Option<(XData<T>, CopyPlan)>,
}

impl<T: Element> Operand<T> {
    /// Scratch and a copy plan when `x` cut before each axis of `splits` (increasing) does not merge into one
    /// axis per piece.
    fn new(op: &str, x: &XData<T>, splits: &[usize], to_scratch: bool) -> Result<Operand<T>> {
        let (shape, strides) = (x.shape(), x.strides());
        let mut fine = true;
        let mut start = 0;
        for &end in splits.iter().chain([&shape.len()]) {
            let (Some(extents), Some(steps)) = (shape.get(start..end), strides.get(start..end)) else {
                return Err(Error::invalid(
                    op,
                    format!("cannot cut the axes of shape {shape:?} (strides {strides:?}) before axes {splits:?}"),
                ));
            };
            fine &= merged(extents, steps).is_some();
            start = end;
        }
        if fine {
            return Ok(Operand { scratch: None });
        }
        let s = XData::uninit(x.app(), op, shape)?;
        let plan =
            if to_scratch { CopyPlan::new(op, x, &s, false, None)? } else { CopyPlan::new(op, &s, x, false, None)? };
        Ok(Operand { scratch: Some((s, plan)) })
    }

    fn view<'a>(&'a self, x: &'a XData<T>) -> &'a XData<T> {
        self.scratch.as_ref().map_or(x, |(s, _)| s)
    }
}

/// How a coil combination runs, as `strategy()` of [`super::CoilSum`] and [`super::RSoS`] reports it: one
/// work-item per output walks the coils of `[frames, coils, positions]` (each merged into one axis), arrays
/// whose axes do not merge copied through contiguous scratch first.
///
/// ```
/// use cliper::{Process, RSoS, XData};
/// let app = cliper::ClApp::new()?;
/// let x = XData::<num_complex::Complex32>::zeros(&app, &[8, 32, 32])?;
/// let mut rsos = RSoS::new(&x, &XData::zeros(&app, &[32, 32])?, 0);
/// rsos.init()?;
/// let s = rsos.strategy().unwrap();
/// assert_eq!((s.frames, s.coils, s.positions, s.gathered), (1, 8, 1024, 0));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoilStrategy {
    /// Frames (the frame axes' product).
    pub frames: usize,
    /// Coils.
    pub coils: usize,
    /// Spatial positions (the spatial axes' product).
    pub positions: usize,
    /// Arrays copied through contiguous scratch because their axes do not merge (0 to 3).
    pub gathered: usize,
    /// The index type.
    pub index: IndexType,
}

impl std::fmt::Display for CoilStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "coil_reduce over {} frames × {} coils × {} positions", self.frames, self.coils, self.positions)?;
        if self.gathered > 0 {
            write!(f, ", {} array(s) through scratch", self.gathered)?;
        }
        Ok(())
    }
}

pub(crate) struct CoilPlan<T: Element, O: Element> {
    x: Operand<T>,
    maps: Option<Operand<T>>,
    out: Operand<O>,
    kernel: Option<Kernel>,
    index: IndexType,
    frames: usize,
    coils: usize,
    positions: usize,
    groups: usize,
    /// The kernel's strides over the arrays it reads and writes (the originals or their scratch copies):
    /// x along frames, coils, positions; maps along coils, positions; out along frames, positions.
    strides: [u64; 7],
}

const GROUP: usize = 256;

impl<T: Element, O: Element> CoilPlan<T, O> {
    /// Checks shapes (`out` = `x` without the coil axis; `maps` = `[coils, spatial…]`) and plans.
    pub(crate) fn new(
        op: &str,
        mode: CoilMode,
        x: &XData<T>,
        coil_axis: usize,
        maps: Option<&XData<T>>,
        out: &XData<O>,
    ) -> Result<CoilPlan<T, O>> {
        let shape = x.shape();
        let Some((frame_shape, coils_on @ [coils, spatial @ ..])) = shape.split_at_checked(coil_axis) else {
            return Err(Error::axis(format!("{op} (coil axis)"), coil_axis as isize, shape));
        };
        let expected: Vec<usize> = shape.iter().enumerate().filter(|&(k, _)| k != coil_axis).map(|(_, &n)| n).collect();
        if out.shape() != expected.as_slice() {
            let why = format!("the input {shape:?} without coil axis {coil_axis}");
            return Err(Error::shape_because(op, &expected, out.shape(), why));
        }
        if let Some(m) = maps
            && m.shape() != coils_on
        {
            return Err(Error::shape_because(op, coils_on, m.shape(), "sensitivity maps [coils, spatial…]"));
        }
        let frames: usize = frame_shape.iter().product();
        let coils = *coils;
        let positions: usize = spatial.iter().product();
        let x_op = Operand::new(op, x, &[coil_axis, coil_axis + 1], true)?;
        let maps_op = maps.map(|m| Operand::new(op, m, &[1], true)).transpose()?;
        let out_op = Operand::new(op, out, &[coil_axis], false)?;
        let count = (frames * positions) as u64;
        let mut layouts = vec![x.layout(), out.layout()];
        layouts.extend(maps.map(|m| m.layout()));
        let index = index_type_for(&layouts, &[count]);
        let kernel = if count == 0 {
            None
        } else {
            let options = format!(
                "{} -DIDX={} -DCOIL_MODE={} -DO={}",
                T::build_options(),
                index.cl_type(),
                mode as u32,
                O::CL_TYPE
            );
            let program = x.app().build_program("mri.cl", &kernels::with_common(kernels::MRI), &options)?;
            Some(program.kernel("coil_reduce")?.owned_by(op))
        };
        let groups = (count as usize).div_ceil(GROUP).clamp(1, 1 << 16);
        let stride = |shape: &[usize], strides: &[usize]| merged(shape, strides).map_or(0, |m| m.1) as u64;
        // The arrays the kernel reads and writes have the shapes checked above (scratch copies too): x
        // [frames…, coils, spatial…], maps [coils, spatial…], out [frames…, spatial…].
        let (xv, ov) = (x_op.view(x), out_op.view(out));
        let layout_error = |what: &str, a: &[usize]| {
            Error::invalid(op, format!("{what} strides {a:?} do not fit the input shape {shape:?}"))
        };
        let Some((x_frames, [x_coil, x_spatial @ ..])) = xv.strides().split_at_checked(coil_axis) else {
            return Err(layout_error("input", xv.strides()));
        };
        let Some((out_frames, out_spatial)) = ov.strides().split_at_checked(coil_axis) else {
            return Err(layout_error("output", ov.strides()));
        };
        let (sc, sp) = match (maps, &maps_op) {
            (Some(m), Some(operand)) => {
                let mv = operand.view(m);
                let [m_coil, m_spatial @ ..] = mv.strides() else { return Err(layout_error("maps", mv.strides())) };
                (*m_coil as u64, stride(spatial, m_spatial))
            }
            _ => (0, 0),
        };
        let strides = [
            stride(frame_shape, x_frames),
            *x_coil as u64,
            stride(spatial, x_spatial),
            sc,
            sp,
            stride(frame_shape, out_frames),
            stride(spatial, out_spatial),
        ];
        Ok(CoilPlan { x: x_op, maps: maps_op, out: out_op, kernel, index, frames, coils, positions, groups, strides })
    }

    /// What the plan runs.
    pub(crate) fn strategy(&self) -> CoilStrategy {
        let scratch = |o: &Operand<T>| usize::from(o.scratch.is_some());
        CoilStrategy {
            frames: self.frames,
            coils: self.coils,
            positions: self.positions,
            gathered: scratch(&self.x)
                + self.maps.as_ref().map_or(0, scratch)
                + usize::from(self.out.scratch.is_some()),
            index: self.index,
        }
    }

    pub(crate) fn launch(&mut self, op: &str, x: &XData<T>, maps: Option<&XData<T>>, out: &XData<O>) -> Result<()> {
        let Some(kernel) = self.kernel.as_mut() else { return Ok(()) };
        if let Some((s, copy)) = self.x.scratch.as_mut() {
            copy.launch(op, x, s)?;
        }
        if let (Some(m), Some(Operand { scratch: Some((s, copy)) })) = (maps, self.maps.as_mut()) {
            copy.launch(op, m, s)?;
        }
        let xv = self.x.view(x);
        let ov = self.out.view(out);
        let mv = match (maps, &self.maps) {
            (Some(m), Some(operand)) => operand.view(m),
            _ => xv,
        };
        let [xf, xc, xp, sc, sp, of, op_stride] = self.strides;
        let idx = self.index;
        let element = std::mem::size_of::<T>() as u64;
        let count = (self.frames * self.positions) as u64;
        let bytes = count * self.coils as u64 * element * if maps.is_some() { 2 } else { 1 }
            + count * std::mem::size_of::<O>() as u64;
        kernel
            .launch()
            .input("x", xv)
            .index("x0", idx, xv.offset() as u64)
            .index("xf", idx, xf)
            .index("xc", idx, xc)
            .index("xp", idx, xp)
            .input("s", mv)
            .index("s0", idx, mv.offset() as u64)
            .index("sc", idx, sc)
            .index("sp", idx, sp)
            .output("out", ov)
            .index("o0", idx, ov.offset() as u64)
            .index("of", idx, of)
            .index("op", idx, op_stride)
            .index("frames", idx, self.frames as u64)
            .index("coils", idx, self.coils as u64)
            .index("positions", idx, self.positions as u64)
            .global(&[self.groups * GROUP])
            .local(&[GROUP])
            .work(bytes, count * self.coils as u64 * 8)
            .enqueue()?;
        if let Some((s, copy)) = self.out.scratch.as_mut() {
            copy.launch(op, s, out)?;
        }
        Ok(())
    }
}

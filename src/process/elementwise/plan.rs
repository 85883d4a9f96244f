//! The planner behind the element-wise processes ([`super::ComplexElementProd`], [`super::ApplyMask`],
//! [`super::Complex2Real`], [`super::ScalarMultiply`], [`super::Fill`]): one `elementwise` kernel per operation
//! and element types (`kernels/elementwise.cl`), walking the output's shape as up to eight merged batch axes,
//! with the second operand broadcast by numpy's rules (stride 0 along broadcast axes).

use crate::app::Kernel;
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::planning::index_type_for;
use crate::process::planning::{Batch3, broadcast};

/// The operation, as `kernels/elementwise.cl` numbers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EwOp {
    Mul = 1,
    MulConj = 2,
    Mask = 3,
    Real = 4,
    Imag = 5,
    Abs = 6,
    Arg = 7,
    Scale = 8,
    Fill = 9,
    Widen = 10,
    Narrow = 11,
}

/// Work-items per group, and the most groups one launch uses (the kernel loops over the rest).
const GROUP: usize = 256;
const MAX_GROUPS: usize = 1 << 16;

/// How an element-wise process runs, as its `strategy()` reports it.
///
/// ```
/// use cliper::{ClApp, ElementwiseStrategy, Process, ScalarMultiply, XData};
/// let app = ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[64, 100])?;
/// let mut p = ScalarMultiply::new(&x.slice_axis(1, 0..50)?, &x.slice_axis(1, 50..100)?, 2.0);
/// p.init()?;
/// let Some(ElementwiseStrategy::Kernel { axes, .. }) = p.strategy() else { unreachable!() };
/// assert_eq!(axes, 2); // the half-rows do not merge into one axis
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElementwiseStrategy {
    /// Nothing to compute (an empty array).
    Nothing,
    /// The `elementwise` kernel over the output's shape as merged batch axes.
    Kernel {
        /// Axes after merging the ones every operand walks without gaps (1 for contiguous arrays).
        axes: usize,
        /// Work-groups launched (each loops over the rest).
        groups: usize,
        /// Work-items per group.
        work_group: usize,
        /// The index type.
        index: IndexType,
    },
}

impl ElementwiseStrategy {
    /// The strategy of a process that launches one element-wise style kernel (`launched`: it had elements to
    /// launch over) with `axes` merged axes in `groups` groups of `work_group` items.
    pub(crate) fn one_kernel(
        launched: bool,
        axes: usize,
        groups: usize,
        work_group: usize,
        index: IndexType,
    ) -> ElementwiseStrategy {
        if launched {
            ElementwiseStrategy::Kernel { axes, groups, work_group, index }
        } else {
            ElementwiseStrategy::Nothing
        }
    }
}

impl std::fmt::Display for ElementwiseStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ElementwiseStrategy::Nothing => write!(f, "none"),
            ElementwiseStrategy::Kernel { axes, groups, work_group, index } => {
                write!(
                    f,
                    "elementwise over {axes} axes ({groups}×{work_group} work-items, {} indices)",
                    index.cl_type()
                )
            }
        }
    }
}

/// `x`, when `y` broadcasts to it by numpy's rules; otherwise an error naming both shapes.
pub(super) fn broadcast_to(op: &str, x: &[usize], y: &[usize]) -> Result<Vec<usize>> {
    let zeros = |n: usize| vec![0; n];
    match broadcast((x, &zeros(x.len())), (y, &zeros(y.len()))) {
        Some((shape, _, _)) if shape == x => Ok(shape),
        _ => Err(Error::shape_rule(op, format!("a second operand that broadcasts to {x:?}"), y)),
    }
}

pub(crate) struct EwPlan {
    kernel: Option<Kernel>,
    batch: Batch3,
    index: IndexType,
    groups: usize,
    bytes: u64,
}

impl EwPlan {
    /// Plans `out = op(x, y)`: `x` has `out`'s shape (for [`EwOp::Fill`] pass `out` itself), `y` (if any)
    /// broadcasts to it.
    pub(crate) fn new<T: Element, Y: Element, O: Element>(
        name: &str,
        op: EwOp,
        x: &XData<T>,
        y: Option<&XData<Y>>,
        out: &XData<O>,
    ) -> Result<EwPlan> {
        let app = out.app();
        if !app.same_as(x.app()) || y.is_some_and(|y| !app.same_as(y.app())) {
            return Err(Error::invalid(name, "the arrays belong to different ClApps"));
        }
        if x.shape() != out.shape() {
            return Err(Error::shape_because(name, x.shape(), out.shape(), "the input's shape"));
        }
        let (y_strides, y_layout) = match y {
            Some(y) => {
                let (shape, _, sy) = broadcast((out.shape(), out.strides()), (y.shape(), y.strides()))
                    .filter(|(shape, _, _)| shape.as_slice() == out.shape())
                    .ok_or_else(|| {
                        Error::shape_rule(
                            name,
                            format!("a second operand that broadcasts to {:?}", out.shape()),
                            y.shape(),
                        )
                    })?;
                debug_assert_eq!(shape.len(), out.ndim());
                (sy, Some(y.layout()))
            }
            None => (x.strides().to_vec(), None),
        };
        let batch = Batch3::new(name, out.shape(), [x.strides(), &y_strides, out.strides()])?;
        let count = batch.count() * u64::from(!out.is_empty());
        let mut layouts = vec![x.layout(), out.layout()];
        layouts.extend(y_layout);
        let index = index_type_for(&layouts, &[count]);
        let kernel = if count == 0 {
            None
        } else {
            let options = format!(
                "{} -DIDX={} -DOP={} -DY={} -DO={} -DO_IS_COMPLEX={}",
                T::build_options(),
                index.cl_type(),
                op as u32,
                Y::CL_TYPE,
                O::CL_TYPE,
                u8::from(O::IS_COMPLEX)
            );
            let program = app.build_program("elementwise.cl", &kernels::with_common(kernels::ELEMENTWISE), &options)?;
            Some(program.kernel("elementwise")?.owned_by(name))
        };
        let reads = match op {
            EwOp::Fill => 0,
            EwOp::Mul | EwOp::MulConj | EwOp::Mask => std::mem::size_of::<T>() + std::mem::size_of::<Y>(),
            _ => std::mem::size_of::<T>(),
        };
        let bytes = count * (reads + std::mem::size_of::<O>()) as u64;
        let groups = (count as usize).div_ceil(GROUP).clamp(1, MAX_GROUPS);
        Ok(EwPlan { kernel, batch, index, groups, bytes })
    }

    /// What the plan runs.
    pub(crate) fn strategy(&self) -> ElementwiseStrategy {
        match self.kernel {
            None => ElementwiseStrategy::Nothing,
            Some(_) => ElementwiseStrategy::Kernel {
                axes: self.batch.axes as usize,
                groups: self.groups,
                work_group: GROUP,
                index: self.index,
            },
        }
    }

    /// Enqueues the operation; `y` is ignored for unary operations (pass `x`), `scalar` by all but
    /// [`EwOp::Scale`] and [`EwOp::Fill`] (which passes the output as `x` and `y`).
    pub(crate) fn launch<T: Element, Y: Element, O: Element>(
        &mut self,
        x: &XData<T>,
        y: &XData<Y>,
        out: &XData<O>,
        scalar: T,
    ) -> Result<()> {
        let Some(kernel) = self.kernel.as_mut() else { return Ok(()) };
        let b = &self.batch;
        let idx = self.index;
        kernel
            .launch()
            .input("x", x)
            .index("x0", idx, x.offset() as u64)
            .input("y", y)
            .index("y0", idx, y.offset() as u64)
            .output("out", out)
            .index("o0", idx, out.offset() as u64)
            .scalar("nd", b.axes)
            .scalar("shape", b.shape)
            .scalar("sx", b.strides[0])
            .scalar("sy", b.strides[1])
            .scalar("so", b.strides[2])
            .index("count", idx, b.count())
            .scalar("scalar", scalar)
            .global(&[self.groups * GROUP])
            .local(&[GROUP])
            .work(self.bytes, b.count())
            .enqueue()
    }
}

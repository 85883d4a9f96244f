//! What the families' planners share: the plan a process's `init` prepares ([`Prepared`]), batch axes shared by
//! several arrays in the form the kernels take them (`batch_offsets3` in `kernels/common.cl`: an axis count and
//! `ulong8` extents and strides), numpy broadcasting, the index type and 16-byte runs.

use crate::data::{Launch, Layout, XData};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;

/// What a process's `init` prepared (kernels, plan, scratch), or nothing before `init`.
///
/// `launch` takes it with [`Prepared::get`], which is the one place that reports
/// [`Error::NotInitialized`]; [`Prepared::is_ready`] backs [`super::Process::is_initialized`].
///
/// ```
/// use cliper::{Error, Prepared};
/// let mut plan = Prepared::<u32>::default();
/// assert!(matches!(plan.get("Demo"), Err(Error::NotInitialized { op }) if op == "Demo"));
/// plan.set(7);
/// assert_eq!((plan.is_ready(), *plan.get("Demo")?), (true, 7));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Debug)]
pub struct Prepared<P>(Option<P>);

impl<P> Default for Prepared<P> {
    fn default() -> Self {
        Prepared(None)
    }
}

impl<P> Prepared<P> {
    /// Keeps what `init` prepared (replacing an earlier plan).
    pub fn set(&mut self, plan: P) {
        self.0 = Some(plan);
    }

    /// The plan, or [`Error::NotInitialized`] naming `op` when `init` has not run (or failed).
    pub fn get(&mut self, op: &str) -> Result<&mut P> {
        self.0.as_mut().ok_or_else(|| Error::NotInitialized { op: op.to_string() })
    }

    /// The plan, when there is one (for `strategy()`).
    pub fn as_ref(&self) -> Option<&P> {
        self.0.as_ref()
    }

    /// Whether `init` has prepared a plan.
    pub fn is_ready(&self) -> bool {
        self.0.is_some()
    }
}

/// Most batch axes the kernels walk (after merging); one `ulong8` holds them.
pub(crate) const MAX_AXES: usize = 8;

/// Up to eight batch axes over three arrays: extents, and each array's stride along each axis (0 where an
/// array is broadcast).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Batch3 {
    pub axes: u32,
    pub shape: [u64; MAX_AXES],
    pub strides: [[u64; MAX_AXES]; 3],
}

impl Batch3 {
    /// Batch axes of extents `shape` with the three arrays' `strides` (each as long as `shape`). Axes of
    /// extent 1 are dropped and neighbours merged where every array is gap-free across them, so most batches
    /// become one axis.
    pub(crate) fn new(op: &str, shape: &[usize], strides: [&[usize]; 3]) -> Result<Batch3> {
        if strides.iter().any(|s| s.len() < shape.len()) {
            return Err(Error::invalid(
                op,
                format!("batch shape {shape:?} needs a stride per axis for each array, got strides {strides:?}"),
            ));
        }
        let [s0, s1, s2] = strides;
        let mut axes: Vec<(usize, [usize; 3])> = Vec::with_capacity(shape.len());
        for (((&n, &a), &b), &c) in shape.iter().zip(s0).zip(s1).zip(s2) {
            if n == 1 {
                continue;
            }
            let s = [a, b, c];
            match axes.last_mut() {
                Some((m, prev)) if prev.iter().zip(&s).all(|(&p, &t)| p == n * t) => {
                    *m *= n;
                    *prev = s;
                }
                _ => axes.push((n, s)),
            }
        }
        if axes.len() > MAX_AXES {
            return Err(Error::Unsupported {
                what: format!(
                    "{op}: batch shape {shape:?} needs {} axes after merging; at most {MAX_AXES} are supported",
                    axes.len()
                ),
            });
        }
        let mut b = Batch3 { axes: axes.len() as u32, ..Batch3::default() };
        let [t0, t1, t2] = &mut b.strides;
        let slots = b.shape.iter_mut().zip(t0.iter_mut()).zip(t1.iter_mut()).zip(t2.iter_mut());
        for (&(n, [sa, sb, sc]), (((extent, ta), tb), tc)) in axes.iter().zip(slots) {
            *extent = n as u64;
            (*ta, *tb, *tc) = (sa as u64, sb as u64, sc as u64);
        }
        Ok(b)
    }

    /// Number of batch entries (1 with no axes).
    pub(crate) fn count(&self) -> u64 {
        self.shape.iter().take(self.axes as usize).product()
    }

    /// The element offsets in the three arrays of every batch entry, in order (last axis fastest), starting
    /// from `origin`: what a host loop over the batch visits.
    pub(crate) fn offsets(&self, origin: [usize; 3]) -> Vec<[usize; 3]> {
        let axes = self.axes as usize;
        let mut offsets = Vec::with_capacity(self.count() as usize);
        let mut index = [0u64; MAX_AXES];
        loop {
            let mut at = origin;
            for (slot, strides) in at.iter_mut().zip(&self.strides) {
                *slot += index.iter().zip(strides).take(axes).map(|(&i, &s)| (i * s) as usize).sum::<usize>();
            }
            offsets.push(at);
            // The next index; done when every axis has wrapped.
            let mut axis = axes;
            loop {
                if axis == 0 {
                    return offsets;
                }
                axis -= 1;
                let (Some(i), Some(&extent)) = (index.get_mut(axis), self.shape.get(axis)) else { return offsets };
                *i += 1;
                if *i < extent {
                    break;
                }
                *i = 0;
            }
        }
    }
}

/// numpy broadcasting of two batch shapes (aligned at the right; each pair of extents equal, or one is 1).
/// Returns the broadcast shape and each side's strides on it (0 along broadcast axes), or `None` when the shapes
/// do not broadcast.
pub(crate) fn broadcast(
    a: (&[usize], &[usize]),
    b: (&[usize], &[usize]),
) -> Option<(Vec<usize>, Vec<usize>, Vec<usize>)> {
    let n = a.0.len().max(b.0.len());
    let (mut shape, mut sa, mut sb) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    // From the last axis back; a side with fewer axes has extent 1 (stride 0) on the ones it lacks.
    for ((na, ta), (nb, tb)) in from_right(a).zip(from_right(b)).take(n) {
        shape.push(match (na, nb) {
            _ if na == nb => na,
            (1, _) => nb,
            (_, 1) => na,
            _ => return None,
        });
        sa.push(if na == 1 { 0 } else { ta });
        sb.push(if nb == 1 { 0 } else { tb });
    }
    for v in [&mut shape, &mut sa, &mut sb] {
        v.reverse();
    }
    Some((shape, sa, sb))
}

/// `(extent, stride)` of each axis from the last one back, then `(1, 0)` for ever.
fn from_right<'a>((shape, strides): (&'a [usize], &'a [usize])) -> impl Iterator<Item = (usize, usize)> + 'a {
    shape.iter().zip(strides).rev().map(|(&n, &s)| (n, s)).chain(std::iter::repeat((1, 0)))
}

/// The index type a kernel needs to address every element of arrays with these layouts and to count up to
/// each of `counts` (work-groups, scratch lengths).
pub(crate) fn index_type_for(layouts: &[&Layout], counts: &[u64]) -> IndexType {
    let extent = layouts.iter().filter_map(|l| l.span()).map(|(_, hi)| hi as u64 + 1).chain(counts.iter().copied());
    IndexType::for_extent(extent.max().unwrap_or(0))
}

/// Elements of `T` in one 16-byte run, the unit the kernels read or write as one vector (`Run` in common.cl).
pub(crate) fn run_width<T: Element>() -> usize {
    16 / std::mem::size_of::<T>()
}

/// The build options that turn on 16-byte runs of `T` (`-DVW`, `-DVT`), with a leading space.
pub(crate) fn run_options<T: Element>() -> String {
    let components = 16 / std::mem::size_of::<T::Real>();
    format!(" -DVW={} -DVT={}{components}", run_width::<T>(), <T::Real as Element>::CL_TYPE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_batches_merge_and_unit_axes_vanish() {
        let b = Batch3::new("t", &[2, 1, 3], [&[60, 60, 20], &[0, 0, 0], &[6, 6, 2]]).unwrap();
        assert_eq!(b.axes, 1);
        assert_eq!((b.shape[0], b.strides[0][0], b.strides[1][0], b.strides[2][0]), (6, 20, 0, 2));
        assert_eq!(b.count(), 6);
        let none = Batch3::new("t", &[], [&[], &[], &[]]).unwrap();
        assert_eq!((none.axes, none.count()), (0, 1));
    }

    #[test]
    fn gaps_keep_axes_apart() {
        let b = Batch3::new("t", &[2, 3], [&[100, 10], &[3, 1], &[3, 1]]).unwrap();
        assert_eq!(b.axes, 2);
    }

    #[test]
    fn offsets_visit_every_entry_last_axis_fastest() {
        let b = Batch3::new("t", &[2, 3], [&[100, 10], &[0, 1], &[3, 1]]).unwrap();
        let offsets = b.offsets([5, 0, 1]);
        assert_eq!(offsets.len(), 6);
        assert_eq!(offsets[..4], [[5, 0, 1], [15, 1, 2], [25, 2, 3], [105, 0, 4]]);
        assert_eq!(Batch3::default().offsets([7, 8, 9]), vec![[7, 8, 9]]);
    }

    #[test]
    fn numpy_broadcasting() {
        let (shape, sa, sb) = broadcast((&[4, 1], &[1, 9]), (&[3], &[7])).unwrap();
        assert_eq!((shape, sa, sb), (vec![4, 3], vec![1, 0], vec![0, 7]));
        assert!(broadcast((&[2], &[1]), (&[3], &[1])).is_none());
        assert_eq!(broadcast((&[], &[]), (&[5], &[2])).unwrap().0, vec![5]);
    }
}

/// The kernels' names of the source's strides, the target's, and the block's extents (`resample.cl`,
/// `morphology.cl`; `rank.cl` for the strides: a block of up to four axes w, z, y, x).
pub(crate) const X_STRIDES: [&str; 4] = ["xsw", "xsz", "xsy", "xsx"];
pub(crate) const Y_STRIDES: [&str; 4] = ["ysw", "ysz", "ysy", "ysx"];
pub(crate) const EXTENTS: [&str; 4] = ["nw", "nz", "ny", "nx"];

/// `values` as the next index arguments, named `names` in order.
pub(crate) fn indices<'k, const N: usize>(
    mut launch: Launch<'k>,
    idx: IndexType,
    names: [&str; N],
    values: &[usize],
) -> Launch<'k> {
    for (name, &value) in names.into_iter().zip(values) {
        launch = launch.index(name, idx, value as u64);
    }
    launch
}

/// A pass's source and target as `[batch, z, y, x]` views: the extents and both arrays' strides.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PassView {
    pub(crate) extents: [usize; 4],
    pub(crate) source: [usize; 4],
    pub(crate) target: [usize; 4],
}

/// The views of a pass from `source` to `target` (same shape) over their last `rank` axes, or the error naming
/// the array whose leading axes do not merge.
pub(crate) fn pass_view<T: Element>(op: &str, source: &XData<T>, target: &XData<T>, rank: usize) -> Result<PassView> {
    let ((extents, source), (_, target)) = (array_view(op, source, rank)?, array_view(op, target, rank)?);
    Ok(PassView { extents, source, target })
}

/// One array as a `[batch, z, y, x]` view over its last `rank` axes: extents and strides, or the error naming the
/// array whose leading axes do not merge.
pub(crate) fn array_view<T: Element>(op: &str, a: &XData<T>, rank: usize) -> Result<([usize; 4], [usize; 4])> {
    view4(a.shape(), a.strides(), rank).ok_or_else(|| Error::Unsupported {
        what: format!(
            "{op} of a view of shape {:?} and strides {:?} whose leading axes do not merge into one; make it \
             contiguous first",
            a.shape(),
            a.strides()
        ),
    })
}

/// The view `[batch, z, y, x]` of an array whose last `rank` axes are filtered: extents and strides, the leading
/// axes merged into one (they must lie evenly in memory).
pub(crate) fn view4(shape: &[usize], strides: &[usize], rank: usize) -> Option<([usize; 4], [usize; 4])> {
    let nd = shape.len();
    let mut extents = [1usize; 4];
    let mut steps = [0usize; 4];
    for k in 0..rank {
        let axis = nd - rank + k;
        let slot = 4 - rank + k;
        *extents.get_mut(slot)? = *shape.get(axis)?;
        *steps.get_mut(slot)? = *strides.get(axis)?;
    }
    // Leading axes: merged while each one's stride is the next one's stride times its extent.
    let lead = nd - rank;
    let mut merged: Option<(usize, usize)> = None;
    for axis in (0..lead).rev() {
        let (n, s) = (*shape.get(axis)?, *strides.get(axis)?);
        merged = match merged {
            None => Some((n, s)),
            Some((m, t)) if n == 1 => Some((m, t)),
            Some((1, _)) => Some((n, s)),
            Some((m, t)) if s == t * m => Some((m * n, t)),
            Some(_) => return None,
        };
    }
    let (n, s) = merged.unwrap_or((1, 0));
    extents[0] = n;
    steps[0] = s;
    Some((extents, steps))
}

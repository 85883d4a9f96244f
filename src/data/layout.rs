//! Shapes, strides and offsets (all in elements) and the zero-copy view arithmetic on them.

use crate::error::{Error, Result};

/// Where the elements of an N-d array lie in a buffer: element `[i0, i1, …]` is at
/// `offset + Σ ik·strides[k]`. Strides are never negative, so every view reads forward from its offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    pub shape: Vec<usize>,
    pub strides: Vec<usize>,
    pub offset: usize,
}

/// Number of elements of `shape`, or an error naming the shape when the product overflows.
pub(crate) fn element_count(op: &str, shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .ok_or_else(|| Error::invalid(op, format!("shape {shape:?} has more elements than fit in memory")))
}

impl Layout {
    /// The row-major (C order) layout of `shape`.
    pub fn row_major(shape: &[usize]) -> Layout {
        let mut strides: Vec<usize> = shape
            .iter()
            .rev()
            .scan(1usize, |step, &n| {
                let stride = *step;
                *step = step.saturating_mul(n.max(1));
                Some(stride)
            })
            .collect();
        strides.reverse();
        Layout { shape: shape.to_vec(), strides, offset: 0 }
    }

    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Row-major and gap-free (axes of extent 1 may have any stride; empty arrays count as contiguous).
    pub fn is_contiguous(&self) -> bool {
        if self.len() == 0 {
            return true;
        }
        let mut step = 1usize;
        for (&n, &s) in self.shape.iter().zip(&self.strides).rev() {
            if n != 1 && s != step {
                return false;
            }
            step *= n;
        }
        true
    }

    /// The lowest and highest element index the layout touches, or `None` when it is empty.
    pub fn span(&self) -> Option<(usize, usize)> {
        if self.len() == 0 {
            return None;
        }
        let last: usize = self.shape.iter().zip(&self.strides).map(|(&n, &s)| (n - 1) * s).sum();
        Some((self.offset, self.offset + last))
    }

    /// The extent and stride of `axis`, or an error naming the shape.
    fn axis(&self, op: &str, axis: usize) -> Result<(usize, usize)> {
        match (self.shape.get(axis), self.strides.get(axis)) {
            (Some(&n), Some(&s)) => Ok((n, s)),
            _ => Err(Error::axis(op, axis as isize, &self.shape)),
        }
    }

    /// The last two axes swapped; arrays of fewer than two axes are returned unchanged (as numpy's `.T`).
    pub fn swap_last_two(&self) -> Layout {
        let mut l = self.clone();
        let n = l.shape.len();
        if n >= 2 {
            l.shape.swap(n - 2, n - 1);
            l.strides.swap(n - 2, n - 1);
        }
        l
    }

    /// Axis `k` of the result is axis `axes[k]` of `self`.
    pub fn permuted(&self, op: &str, axes: &[usize]) -> Result<Layout> {
        check_permutation(op, axes, self.shape.len())?;
        let (shape, strides) = axes.iter().map(|&a| self.axis(op, a)).collect::<Result<Vec<_>>>()?.into_iter().unzip();
        Ok(Layout { shape, strides, offset: self.offset })
    }

    /// Elements `start..end` of `axis`.
    pub fn sliced(&self, op: &str, axis: usize, start: usize, end: usize) -> Result<Layout> {
        let (n, stride) = self.axis(op, axis)?;
        if start > end || end > n {
            return Err(Error::invalid(
                op,
                format!("range {start}..{end} is outside axis {axis} of extent {n} (shape {:?})", self.shape),
            ));
        }
        let mut l = self.clone();
        if let Some(extent) = l.shape.get_mut(axis) {
            *extent = end - start;
        }
        if end > start {
            l.offset += start * stride;
        }
        Ok(l)
    }

    /// The sub-array at `index` along `axis` (one axis fewer).
    pub fn indexed(&self, op: &str, axis: usize, index: usize) -> Result<Layout> {
        let (n, stride) = self.axis(op, axis)?;
        if index >= n {
            return Err(Error::invalid(
                op,
                format!("index {index} is outside axis {axis} of extent {n} (shape {:?})", self.shape),
            ));
        }
        let mut l = self.clone();
        l.offset += index * stride;
        l.shape.remove(axis);
        l.strides.remove(axis);
        Ok(l)
    }

    /// The same elements under a new shape; only for contiguous layouts.
    pub fn reshaped(&self, op: &str, shape: &[usize]) -> Result<Layout> {
        let n = element_count(op, shape)?;
        if n != self.len() {
            let rule = format!("a shape with {} elements (like {:?})", self.len(), self.shape);
            return Err(Error::shape_rule(op, rule, shape));
        }
        if !self.is_contiguous() {
            return Err(Error::invalid(
                op,
                format!(
                    "cannot reshape a non-contiguous view (shape {:?}, strides {:?}) without a copy; call \
                     contiguous() first",
                    self.shape, self.strides
                ),
            ));
        }
        let mut l = Layout::row_major(shape);
        l.offset = self.offset;
        Ok(l)
    }
}

/// `Ok` when `axes` holds each of `0..ndim` exactly once.
pub(crate) fn check_permutation(op: &str, axes: &[usize], ndim: usize) -> Result<()> {
    let mut seen = vec![false; ndim];
    let valid =
        axes.len() == ndim && axes.iter().all(|&a| seen.get_mut(a).is_some_and(|s| !std::mem::replace(s, true)));
    if !valid {
        return Err(Error::invalid(op, format!("axes {axes:?} are not a permutation of 0..{ndim}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_major_strides_and_contiguity() {
        let l = Layout::row_major(&[2, 3, 4]);
        assert_eq!(l.strides, vec![12, 4, 1]);
        assert!(l.is_contiguous());
        assert!(!l.swap_last_two().is_contiguous());
        assert!(Layout::row_major(&[0, 5]).is_contiguous());
    }

    #[test]
    fn views_compose() {
        let l = Layout::row_major(&[4, 5, 6]);
        let s = l.sliced("t", 1, 1, 4).unwrap();
        assert_eq!((s.shape.clone(), s.offset), (vec![4, 3, 6], 6));
        assert!(!s.is_contiguous());
        let i = s.indexed("t", 0, 2).unwrap();
        assert_eq!((i.shape.clone(), i.strides.clone(), i.offset), (vec![3, 6], vec![6, 1], 66));
        assert!(i.is_contiguous());
        let p = l.permuted("t", &[2, 0, 1]).unwrap();
        assert_eq!((p.shape.clone(), p.strides.clone()), (vec![6, 4, 5], vec![1, 30, 6]));
        assert_eq!(l.span(), Some((0, 119)));
    }

    #[test]
    fn bad_arguments_are_named() {
        let l = Layout::row_major(&[4, 5]);
        assert!(l.permuted("p", &[0, 0]).unwrap_err().to_string().contains("not a permutation"));
        assert!(l.sliced("s", 1, 2, 9).unwrap_err().to_string().contains("outside axis 1"));
        assert!(l.indexed("i", 2, 0).unwrap_err().to_string().contains("axis 2 does not exist"));
        let err = l.reshaped("r", &[3, 7]).unwrap_err().to_string();
        assert!(err.contains("[3, 7]") && err.contains("20 elements"), "{err}");
        assert!(l.swap_last_two().reshaped("r", &[20]).is_err());
        assert!(element_count("c", &[usize::MAX, 2]).is_err());
    }
}

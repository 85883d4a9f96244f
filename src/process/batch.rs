//! Batch axes shared by several arrays, in the form the kernels take them (`batch_offsets3` in
//! `kernels/common.cl`: an axis count and `ulong8` extents and strides).

use crate::error::{Error, Result};

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
        let mut axes: Vec<(usize, [usize; 3])> = Vec::with_capacity(shape.len());
        for (k, &n) in shape.iter().enumerate() {
            if n == 1 {
                continue;
            }
            let s = [strides[0][k], strides[1][k], strides[2][k]];
            match axes.last_mut() {
                Some((m, prev)) if (0..3).all(|a| prev[a] == n * s[a]) => {
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
        for (k, (n, s)) in axes.iter().enumerate() {
            b.shape[k] = *n as u64;
            for (array, &stride) in b.strides.iter_mut().zip(s) {
                array[k] = stride as u64;
            }
        }
        Ok(b)
    }

    /// Number of batch entries (1 with no axes).
    pub(crate) fn count(&self) -> u64 {
        self.shape[..self.axes as usize].iter().product()
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
    let (mut shape, mut sa, mut sb) = (vec![1; n], vec![0; n], vec![0; n]);
    for k in 0..n {
        let pick = |(s, st): (&[usize], &[usize])| {
            let lead = n - s.len();
            if k < lead { (1, 0) } else { (s[k - lead], st[k - lead]) }
        };
        let ((na, ta), (nb, tb)) = (pick(a), pick(b));
        shape[k] = match (na, nb) {
            _ if na == nb => na,
            (1, _) => nb,
            (_, 1) => na,
            _ => return None,
        };
        sa[k] = if na == 1 { 0 } else { ta };
        sb[k] = if nb == 1 { 0 } else { tb };
    }
    Some((shape, sa, sb))
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
    fn numpy_broadcasting() {
        let (shape, sa, sb) = broadcast((&[4, 1], &[1, 9]), (&[3], &[7])).unwrap();
        assert_eq!((shape, sa, sb), (vec![4, 3], vec![1, 0], vec![0, 7]));
        assert!(broadcast((&[2], &[1]), (&[3], &[1])).is_none());
        assert_eq!(broadcast((&[], &[]), (&[5], &[2])).unwrap().0, vec![5]);
    }
}

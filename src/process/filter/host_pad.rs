//! [`super::Pad`] on the host, for CPU devices (`PadStrategy::host`): PoCL's `pad` kernel wrote 2048² in 4.1 ms
//! where numpy.pad takes 1.3; the output's rows, copied and extended by the host's threads in the mapped buffers
//! (host memory on a CPU device: nothing is copied to get there), run at memory speed.

use super::border::Border;
use crate::element::Element;
use rayon::prelude::*;

/// A planned host pad: the input's extents and strides (its first element at `in_base` of the mapped input), the
/// output's extents (it is contiguous, mapped from its first element), the widths and the border.
pub(crate) struct HostPad {
    pub in_base: usize,
    pub in_shape: Vec<usize>,
    pub in_strides: Vec<usize>,
    pub out_shape: Vec<usize>,
    pub widths: Vec<(usize, usize)>,
    pub border: Border,
}

impl HostPad {
    /// Writes every element of `out` (the contiguous output) from `input` by numpy.pad's rule, a row (the last
    /// axis) per task; `value` fills what a constant border adds.
    pub(crate) fn run<T: Element>(&self, value: T, input: &[T], out: &mut [T]) {
        let Some((&row_len, lead)) = self.out_shape.split_last() else {
            // Rank 0: one element, copied.
            if let (Some(o), Some(&v)) = (out.first_mut(), input.get(self.in_base)) {
                *o = v;
            }
            return;
        };
        let (in_last, stride_last, before_last) = (
            self.in_shape.last().copied().unwrap_or(1),
            self.in_strides.last().copied().unwrap_or(1),
            self.widths.last().map_or(0, |w| w.0),
        );
        out.par_chunks_mut(row_len.max(1)).enumerate().for_each(|(r, row)| {
            // The source row: each leading coordinate through the border rule; None when a constant fills it.
            let mut rest = r;
            let mut start = Some(self.in_base);
            for (k, &extent) in lead.iter().enumerate().rev() {
                let o = rest % extent.max(1);
                rest /= extent.max(1);
                let (n, stride, before) = (
                    self.in_shape.get(k).copied().unwrap_or(1),
                    self.in_strides.get(k).copied().unwrap_or(0),
                    self.widths.get(k).map_or(0, |w| w.0),
                );
                start = start
                    .zip(self.border.index(o as i64 - before as i64, n as i64))
                    .map(|(s, i)| s + i as usize * stride);
            }
            let Some(start) = start else {
                row.fill(value);
                return;
            };
            self.border.fill_row(row, input, start, stride_last, in_last, -(before_last as i64), value);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_follow_numpy_pad() {
        // [[1, 2, 3], [4, 5, 6]] padded ((1, 0), (2, 1)) symmetric: numpy.pad gives these rows.
        let input = [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0];
        let p = HostPad {
            in_base: 0,
            in_shape: vec![2, 3],
            in_strides: vec![3, 1],
            out_shape: vec![3, 6],
            widths: vec![(1, 0), (2, 1)],
            border: Border::Reflect,
        };
        let mut out = [0.0; 18];
        p.run(0.0, &input, &mut out);
        assert_eq!(out, [2., 1., 1., 2., 3., 3., 2., 1., 1., 2., 3., 3., 5., 4., 4., 5., 6., 6.]);
        // The transpose (strided input) with a constant: the middle rows read down the columns.
        let t = HostPad {
            in_strides: vec![1, 3],
            in_shape: vec![3, 2],
            out_shape: vec![3, 4],
            widths: vec![(0, 0), (1, 1)],
            border: Border::Constant(9.0),
            ..p
        };
        let mut out = [0.0; 12];
        t.run(9.0, &input, &mut out);
        assert_eq!(out, [9., 1., 4., 9., 9., 2., 5., 9., 9., 3., 6., 9.]);
    }
}

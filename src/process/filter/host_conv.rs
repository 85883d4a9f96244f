//! Convolution passes on the host, for CPU devices (`PassKernel::Host`): PoCL spends 1.2–1.7 s generating code
//! for each new `conv_blocked` specialisation (a 2-D Gaussian is two of them), and its separable passes ran a
//! 2048² Gaussian of σ = 8 in 139 ms where these loops over the mapped buffers (host memory on a CPU device:
//! nothing is copied) take 25 — scipy.ndimage 201.
//!
//! One output row at a time: for every filter row (z, y) whose input row exists, the input row's reach along x
//! (extended by the border rule when the window leaves it) is added in once per x tap, `out[x] += w·row[x·s +
//! j·d]` — contiguous multiply-adds the compiler vectorises (for the widest instructions the machine has, through
//! `pulp`'s run-time dispatch). Filter rows that fall entirely outside a constant border add the constant. Rows
//! are shared out over the host's threads. Each output sums its taps in the kernels' order (z, then y, then x).

use super::border::Border;
use super::weights::FilterElement;
use crate::element::Element;
use rayon::prelude::*;

/// Multiply-adds per parallel task (whole output rows): enough that a task outweighs waking a thread for it.
const TASK_WORK: usize = 1 << 18;

/// A planned pass: the input's spatial extents and strides and where each batch entry starts in the mapped
/// input, the output's spatial extents (it is contiguous, batch entries one after the other, mapped from its
/// first element), the geometry (as the kernels': input coordinate = o·stride + j·dilation − start, per axis
/// z, y, x), the (oriented) weights in z, y, x order, the border and its constant.
pub(crate) struct HostConv<T: Element, K: Element> {
    pub n: [usize; 3],
    pub in_strides: [usize; 3],
    pub batch_starts: Vec<usize>,
    pub o: [usize; 3],
    pub filter: [usize; 3],
    pub stride: [usize; 3],
    pub dilation: [usize; 3],
    pub start: [i64; 3],
    pub weights: Vec<K>,
    pub border: Border,
    pub value: T,
}

/// Input coordinate `o·stride + j·dilation − start` along one axis through the border rule (`None`: the
/// constant).
#[inline(always)]
fn source(border: Border, o: usize, j: usize, stride: usize, dilation: usize, start: i64, n: usize) -> Option<usize> {
    let i = (o * stride + j * dilation) as i64 - start;
    border.index(i, n as i64).map(|k| k as usize)
}

impl<T: Element, K: FilterElement<T>> HostConv<T, K> {
    /// Writes every element of `out` (the contiguous output) from `input` (mapped so that every batch start and
    /// what the strides reach from it is inside).
    pub(crate) fn run(&self, input: &[T], out: &mut [T]) {
        let row = self.o[2];
        if row == 0 {
            return;
        }
        let taps: usize = self.filter.iter().product();
        let rows_per_task = (TASK_WORK / (row * taps)).max(1);
        if out.len() <= row * rows_per_task {
            pulp::Arch::new().dispatch(Rows { conv: self, input, first: 0, rows: out, scratch: &mut Vec::new() });
            return;
        }
        out.par_chunks_mut(row * rows_per_task).enumerate().for_each_init(Vec::new, |scratch, (task, rows)| {
            pulp::Arch::new().dispatch(Rows { conv: self, input, first: task * rows_per_task, rows, scratch });
        });
    }

    /// Output rows `first..` (as many as `rows` holds).
    #[inline(always)]
    fn rows(&self, input: &[T], first: usize, rows: &mut [T], scratch: &mut Vec<T>) {
        let [oz, oy, ox] = self.o;
        let g = self;
        let [fz, fy, fx] = g.filter;
        // The x reach of a row, in input coordinates: [lo, hi].
        let lo = -g.start[2];
        let hi = ((ox - 1) * g.stride[2] + (fx - 1) * g.dilation[2]) as i64 - g.start[2];
        let inside = lo >= 0 && hi < self.n[2] as i64 && self.in_strides[2] == 1;
        for (k, out_row) in rows.chunks_mut(ox).enumerate() {
            let r = first + k;
            let (y, z, b) = (r % oy.max(1), (r / oy.max(1)) % oz.max(1), r / (oy.max(1) * oz.max(1)));
            let Some(&base) = self.batch_starts.get(b) else { continue };
            out_row.fill(T::default());
            for jz in 0..fz {
                let iz = source(self.border, z, jz, g.stride[0], g.dilation[0], g.start[0], self.n[0]);
                for jy in 0..fy {
                    let iy = source(self.border, y, jy, g.stride[1], g.dilation[1], g.start[1], self.n[1]);
                    let Some(taps) = self.weights.get((jz * fy + jy) * fx..(jz * fy + jy + 1) * fx) else { continue };
                    let Some((iz, iy)) = iz.zip(iy) else {
                        // A filter row wholly in a constant border.
                        for &w in taps {
                            let c = w.weigh(self.value);
                            out_row.iter_mut().for_each(|v| *v = *v + c);
                        }
                        continue;
                    };
                    let start = base + iz * self.in_strides[0] + iy * self.in_strides[1];
                    let reach = if inside {
                        input.get(start + lo as usize..start + hi as usize + 1)
                    } else {
                        self.extend(input, start, lo, hi, scratch);
                        Some(scratch.as_slice())
                    };
                    if let Some(reach) = reach {
                        self.add_taps(taps, reach, out_row);
                    }
                }
            }
        }
    }

    /// The input row from `start` over x coordinates `[lo, hi]`, through the border rule, into `scratch`.
    #[inline(always)]
    fn extend(&self, input: &[T], start: usize, lo: i64, hi: i64, scratch: &mut Vec<T>) {
        scratch.clear();
        scratch.resize((hi - lo + 1) as usize, self.value);
        self.border.fill_row(scratch, input, start, self.in_strides[2], self.n[2], lo, self.value);
    }

    /// `out[x] += Σⱼ w[j]·reach[x·stride + j·dilation]`, one tap at a time over the whole row.
    #[inline(always)]
    fn add_taps(&self, taps: &[K], reach: &[T], out_row: &mut [T]) {
        let (stride, dilation) = (self.stride[2], self.dilation[2]);
        for (j, &w) in taps.iter().enumerate() {
            let from = reach.get(j * dilation..).unwrap_or_default();
            if stride == 1 {
                for (v, &x) in out_row.iter_mut().zip(from) {
                    *v = *v + w.weigh(x);
                }
            } else {
                for (v, &x) in out_row.iter_mut().zip(from.iter().step_by(stride)) {
                    *v = *v + w.weigh(x);
                }
            }
        }
    }
}

/// [`HostConv::rows`] as `pulp` dispatches it: compiled for the machine's widest vector instructions (a closure
/// would not be inlined into the dispatched function, and its loops would stay at the baseline's SSE2).
struct Rows<'a, T: Element, K: Element> {
    conv: &'a HostConv<T, K>,
    input: &'a [T],
    first: usize,
    rows: &'a mut [T],
    scratch: &'a mut Vec<T>,
}

impl<T: Element, K: FilterElement<T>> pulp::WithSimd for Rows<'_, T, K> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        self.conv.rows(self.input, self.first, self.rows, self.scratch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same pass computed coordinate by coordinate in float64.
    fn reference(p: &HostConv<f64, f64>, input: &[f64]) -> Vec<f64> {
        let g = p;
        let mut out = Vec::new();
        for &base in &p.batch_starts {
            for z in 0..p.o[0] {
                for y in 0..p.o[1] {
                    for x in 0..p.o[2] {
                        let mut acc = 0.0;
                        for jz in 0..g.filter[0] {
                            for jy in 0..g.filter[1] {
                                for jx in 0..g.filter[2] {
                                    let w = p.weights[(jz * g.filter[1] + jy) * g.filter[2] + jx];
                                    let at = |o, j, k: usize| {
                                        source(p.border, o, j, g.stride[k], g.dilation[k], g.start[k], p.n[k])
                                    };
                                    let v = match (at(z, jz, 0), at(y, jy, 1), at(x, jx, 2)) {
                                        (Some(a), Some(b), Some(c)) => {
                                            input
                                                [base + a * p.in_strides[0] + b * p.in_strides[1] + c * p.in_strides[2]]
                                        }
                                        _ => p.value,
                                    };
                                    acc += w * v;
                                }
                            }
                        }
                        out.push(acc);
                    }
                }
            }
        }
        out
    }

    #[test]
    fn passes_match_the_coordinate_rule() {
        // Two batch entries of a 3×7×9 volume stored transposed in x and y (strides 1 and 3 swapped), filters that
        // leave the input on every side, strides and dilations; every border.
        let input: Vec<f64> = (0..2 * 3 * 7 * 9).map(|i| ((i * 37) % 101) as f64 - 50.0).collect();
        // (filter, stride, dilation, start) per axis z, y, x.
        type Axes = [usize; 3];
        let geometries: [(Axes, Axes, Axes, [i64; 3]); 4] = [
            ([1, 1, 5], [1, 1, 1], [1, 1, 1], [0, 0, 2]),
            ([1, 4, 1], [1, 1, 1], [1, 1, 1], [0, 2, 0]),
            ([2, 3, 3], [1, 2, 3], [1, 2, 2], [1, 1, 3]),
            ([3, 2, 2], [2, 1, 1], [2, 1, 1], [0, 0, 0]),
        ];
        for (filter, stride, dilation, start) in geometries {
            for (in_strides, layout) in [([63, 9, 1], "contiguous"), ([63, 1, 7], "transposed")] {
                for border in [Border::Constant(2.5), Border::Nearest, Border::Mirror, Border::Reflect, Border::Wrap] {
                    let taps: usize = filter.iter().product();
                    let p = HostConv::<f64, f64> {
                        n: [3, 7, 9],
                        in_strides,
                        batch_starts: vec![0, 189],
                        o: [0, 1, 2].map(|k| [3usize, 7, 9][k].div_ceil(stride[k])),
                        filter,
                        stride,
                        dilation,
                        start,
                        weights: (0..taps).map(|t| t as f64 * 0.25 - 1.0).collect(),
                        border,
                        value: 2.5,
                    };
                    let mut out = vec![f64::NAN; 2 * p.o.iter().product::<usize>()];
                    p.run(&input, &mut out);
                    // Integer-valued data and quarter weights: every sum is exact in float64.
                    assert_eq!(
                        out,
                        reference(&p, &input),
                        "{filter:?} {stride:?} {dilation:?} {start:?} {layout} {border:?}"
                    );
                }
            }
        }
    }
}

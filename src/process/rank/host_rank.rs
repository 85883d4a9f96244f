//! Rank filters on the host, for CPU devices (`RankStrategy::Host`): the median, percentiles and ranks that the
//! kernels take by a selection network or bisection. On PoCL the bisection ran a 5×5×5 median of 128³ f32 in
//! 6.2 s (32 counting passes over 125 values per element) where scipy's quickselect takes 2.6 s on one core;
//! and the networks take long to compile (5.6 s for 7×7), every window and rank a new program.
//!
//! Values are compared as ordered 64-bit keys (the float's bits, flipped so that integer order is the values'
//! order; float32 widens exactly), so every comparison is one integer compare and ±inf sort as values do.
//!
//! - A box window that spans x (a `size=` median): one row of outputs at a time, the window kept sorted as it
//!   slides. Each column of the window (its z·y values at one x) is gathered and sorted once, when it enters;
//!   a step removes the leaving column (kept sorted in a ring) and merges in the entering one in one pass over
//!   the window — about `taps + 2·column` comparisons per output instead of a selection over all the taps.
//! - Any other footprint: the taps gathered per output, then a selection (`select_nth_unstable`).
//!
//! Rows are shared out over the host's threads.

use crate::element::RealElement;
use crate::process::filter::Border;
use num_complex::Complex64;
use rayon::prelude::*;

/// Key comparisons per parallel task (whole output rows): enough that a task outweighs waking a thread for it.
const TASK_WORK: usize = 1 << 18;

/// A planned rank filter on the mapped input: the spatial extents and strides (z, y, x; 1 and 0 for the axes the
/// window does not span), where each batch entry starts in the mapped input, the window's taps (offsets z, y, x
/// from the output element), the 0-based rank, the border rule and its constant. The output is contiguous,
/// batch entries one after the other.
pub(crate) struct HostRank<T: RealElement> {
    pub n: [usize; 3],
    pub strides: [usize; 3],
    pub batch_starts: Vec<usize>,
    pub taps: Vec<[isize; 3]>,
    pub r: usize,
    pub border: Border,
    pub cval: T,
}

/// The key of `v`: integers in the order of the values (−NaN < −inf < … < −0 < +0 < … < +inf < NaN).
#[inline(always)]
fn key(v: f64) -> u64 {
    let bits = v.to_bits();
    if bits >> 63 == 1 { !bits } else { bits | 1 << 63 }
}

/// The value of key `k` (the inverse of [`key`]).
#[inline(always)]
fn value(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// A box window that spans x: its z·y offset pairs (one column), its x offsets `lo..=hi`.
struct BoxWindow {
    column: Vec<[isize; 2]>,
    lo: isize,
    hi: isize,
}

/// The taps as a box spanning x, or `None` (a footprint that is not a box, or one column wide).
fn box_window(taps: &[[isize; 3]]) -> Option<BoxWindow> {
    let mut lo = [isize::MAX; 3];
    let mut hi = [isize::MIN; 3];
    for t in taps {
        for ((l, h), &v) in lo.iter_mut().zip(hi.iter_mut()).zip(t) {
            *l = (*l).min(v);
            *h = (*h).max(v);
        }
    }
    let [[lz, ly, lx], [hz, hy, hx]] = [lo, hi];
    let width = |l: isize, h: isize| (h - l + 1).max(0) as usize;
    // Taps are distinct, so as many as the bounding box holds means every one of its taps.
    if taps.is_empty() || taps.len() != width(lz, hz) * width(ly, hy) * width(lx, hx) || width(lx, hx) < 2 {
        return None;
    }
    let column = (lz..=hz).flat_map(|z| (ly..=hy).map(move |y| [z, y])).collect();
    Some(BoxWindow { column, lo: lx, hi: hx })
}

/// Work buffers of one thread.
#[derive(Default)]
struct Scratch {
    /// Where each column pair's (or tap's) row starts in the input; `None` where the border gives the constant.
    bases: Vec<Option<usize>>,
    /// The sorted columns in the window, column at x coordinate `c` in slot `(c − lo) mod width`.
    ring: Vec<u64>,
    window: Vec<u64>,
    next: Vec<u64>,
    entering: Vec<u64>,
}

impl<T: RealElement> HostRank<T> {
    /// Writes every element of `out` (the contiguous output) from `input` (mapped so that every batch start and
    /// what the strides reach from it is inside).
    pub(crate) fn run(&self, input: &[T], out: &mut [T]) {
        let row = self.n[2];
        if row == 0 || self.taps.is_empty() {
            return;
        }
        let window = box_window(&self.taps);
        let rows_per_task = (TASK_WORK / (row * self.taps.len())).max(1);
        let run_rows = |first: usize, rows: &mut [T], scratch: &mut Scratch| {
            for (k, out_row) in rows.chunks_mut(row).enumerate() {
                let [b, z, y] = self.row_coordinates(first + k);
                match &window {
                    Some(w) => self.sliding_row(input, w, [b, z, y], out_row, scratch),
                    None => self.selection_row(input, [b, z, y], out_row, scratch),
                }
            }
        };
        if out.len() <= row * rows_per_task {
            run_rows(0, out, &mut Scratch::default());
            return;
        }
        out.par_chunks_mut(row * rows_per_task)
            .enumerate()
            .for_each_init(Scratch::default, |scratch, (task, rows)| run_rows(task * rows_per_task, rows, scratch));
    }

    /// Batch entry, z and y of output row `r`.
    fn row_coordinates(&self, r: usize) -> [usize; 3] {
        let [nz, ny, _] = self.n.map(|n| n.max(1));
        [r / (ny * nz), (r / ny) % nz, r % ny]
    }

    /// Where the input row at offsets `dz`, `dy` from (z, y) of batch entry `b` starts, through the border rule.
    fn row_base(&self, [b, z, y]: [usize; 3], [dz, dy]: [isize; 2]) -> Option<usize> {
        let start = *self.batch_starts.get(b)?;
        let iz = self.border.index(z as i64 + dz as i64, self.n[0] as i64)? as usize;
        let iy = self.border.index(y as i64 + dy as i64, self.n[1] as i64)? as usize;
        Some(start + iz * self.strides[0] + iy * self.strides[1])
    }

    /// The key of the input at `base + x·stride` (the constant's where there is none).
    #[inline(always)]
    fn load(&self, input: &[T], base: Option<usize>, x: Option<i64>, constant: u64) -> u64 {
        match (base, x) {
            (Some(base), Some(x)) => {
                input.get(base + x as usize * self.strides[2]).map_or(constant, |v| key(v.to_c64().re))
            }
            _ => constant,
        }
    }

    /// One output row of a box window that spans x, the window kept sorted as it slides.
    fn sliding_row(&self, input: &[T], w: &BoxWindow, at: [usize; 3], out: &mut [T], s: &mut Scratch) {
        let constant = key(self.cval.to_c64().re);
        let nx = self.n[2] as i64;
        let height = w.column.len();
        let width = (w.hi - w.lo + 1) as usize;
        s.bases.clear();
        s.bases.extend(w.column.iter().map(|&pair| self.row_base(at, pair)));
        // The column at x coordinate `c`, sorted, into `dst`.
        let column = |c: i64, bases: &[Option<usize>], dst: &mut [u64]| {
            let x = self.border.index(c, nx);
            for (d, &base) in dst.iter_mut().zip(bases) {
                *d = self.load(input, base, x, constant);
            }
            dst.sort_unstable();
        };
        s.ring.resize(width * height, 0);
        for (c, slot) in (w.lo as i64..).zip(s.ring.chunks_mut(height)) {
            column(c, &s.bases, slot);
        }
        s.window.clear();
        s.window.extend_from_slice(&s.ring);
        s.window.sort_unstable();
        s.entering.resize(height, 0);
        for (x, o) in out.iter_mut().enumerate() {
            if x > 0 {
                column(x as i64 + w.hi as i64, &s.bases, &mut s.entering);
                let slot = ((x - 1) % width) * height;
                let Some(leaving) = s.ring.get_mut(slot..slot + height) else { return };
                slide(&s.window, leaving, &s.entering, &mut s.next);
                leaving.copy_from_slice(&s.entering);
                std::mem::swap(&mut s.window, &mut s.next);
            }
            *o = T::from_c64(Complex64::new(value(s.window.get(self.r).copied().unwrap_or(constant)), 0.0));
        }
    }

    /// One output row of any footprint: each output's taps gathered, then selected.
    fn selection_row(&self, input: &[T], at: [usize; 3], out: &mut [T], s: &mut Scratch) {
        let constant = key(self.cval.to_c64().re);
        let nx = self.n[2] as i64;
        s.bases.clear();
        s.bases.extend(self.taps.iter().map(|t| self.row_base(at, [t[0], t[1]])));
        s.window.resize(self.taps.len(), 0);
        for (x, o) in out.iter_mut().enumerate() {
            for ((v, t), &base) in s.window.iter_mut().zip(&self.taps).zip(&s.bases) {
                *v = self.load(input, base, self.border.index(x as i64 + t[2] as i64, nx), constant);
            }
            let (_, chosen, _) = s.window.select_nth_unstable(self.r.min(self.taps.len() - 1));
            *o = T::from_c64(Complex64::new(value(*chosen), 0.0));
        }
    }
}

/// `next` = the sorted `window` without the sorted `leaving` values (each one of its values, once) and with the
/// sorted `entering` ones: one merge pass.
fn slide(window: &[u64], leaving: &[u64], entering: &[u64], next: &mut Vec<u64>) {
    next.clear();
    let (mut gone, mut new) = (leaving.iter().peekable(), entering.iter().peekable());
    for &v in window {
        if gone.peek() == Some(&&v) {
            gone.next();
            continue;
        }
        while let Some(&&e) = new.peek() {
            if e > v {
                break;
            }
            next.push(e);
            new.next();
        }
        next.push(v);
    }
    next.extend(new);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rank of each window by sorting all its values in float64, coordinate by coordinate.
    fn reference(p: &HostRank<f64>, input: &[f64], batch: usize) -> Vec<f64> {
        let [nz, ny, nx] = p.n;
        let mut out = vec![];
        for b in 0..batch {
            for z in 0..nz {
                for y in 0..ny {
                    for x in 0..nx {
                        let mut v: Vec<f64> = p
                            .taps
                            .iter()
                            .map(|t| {
                                let c = [z as i64 + t[0] as i64, y as i64 + t[1] as i64, x as i64 + t[2] as i64];
                                let i: Option<Vec<i64>> = (0..3).map(|k| p.border.index(c[k], p.n[k] as i64)).collect();
                                i.map_or(p.cval, |i| {
                                    input[p.batch_starts[b]
                                        + i[0] as usize * p.strides[0]
                                        + i[1] as usize * p.strides[1]
                                        + i[2] as usize * p.strides[2]]
                                })
                            })
                            .collect();
                        v.sort_by(f64::total_cmp);
                        out.push(v[p.r]);
                    }
                }
            }
        }
        out
    }

    #[test]
    fn keys_keep_the_order_of_values() {
        let values = [f64::NEG_INFINITY, -3.5, -1e-300, -0.0, 0.0, 1e-300, 2.0, f64::INFINITY];
        for pair in values.windows(2) {
            assert!(key(pair[0]) < key(pair[1]), "{pair:?}");
        }
        for v in values {
            assert_eq!(value(key(v)).to_bits(), v.to_bits());
        }
    }

    #[test]
    fn sliding_and_selection_match_sorting() {
        // 2 batch entries of 5×7×9 in a strided layout (x stride 2), values with many ties.
        let n = [5usize, 7, 9];
        let strides = [7 * 9 * 2, 9 * 2, 2];
        let input: Vec<f64> = (0..2 * 5 * 7 * 9 * 2).map(|i| ((i * 37) % 23) as f64 - 11.0).collect();
        let batch_starts = vec![1, 5 * 7 * 9 * 2];
        let boxes = |w: [isize; 3], before: [isize; 3]| -> Vec<[isize; 3]> {
            let mut taps = vec![];
            for z in 0..w[0] {
                for y in 0..w[1] {
                    for x in 0..w[2] {
                        taps.push([z - before[0], y - before[1], x - before[2]]);
                    }
                }
            }
            taps
        };
        let cross = vec![[0, 0, 0], [-1, 0, 0], [1, 0, 0], [0, -1, 0], [0, 1, 0], [0, 0, -2], [0, 0, 1]];
        let windows = [
            (boxes([3, 3, 3], [1, 1, 1]), true),
            (boxes([2, 4, 5], [0, 3, 1]), true),
            (boxes([1, 1, 12], [0, 0, 6]), true),
            (boxes([3, 2, 1], [1, 1, 0]), false),
            (cross, false),
        ];
        let borders = [Border::Reflect, Border::Mirror, Border::Nearest, Border::Wrap, Border::Constant(-4.5)];
        for (taps, sliding) in &windows {
            assert_eq!(box_window(taps).is_some(), *sliding);
            for border in borders {
                for r in [0, taps.len() / 2, taps.len() - 1] {
                    let p = HostRank {
                        n,
                        strides,
                        batch_starts: batch_starts.clone(),
                        taps: taps.clone(),
                        r,
                        border,
                        cval: border.value(),
                    };
                    let mut out = vec![f64::NAN; 2 * 5 * 7 * 9];
                    p.run(&input, &mut out);
                    assert_eq!(out, reference(&p, &input, 2), "{} taps, {border:?}, rank {r}", taps.len());
                }
            }
        }
    }
}

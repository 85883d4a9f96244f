//! Connected components on the host, for CPU devices (`LabelStrategy::on_host`): the union-find of the kernels,
//! run in raster order over the mapped buffers. On PoCL the kernels' concurrent union-find (atomic minimum of
//! roots, seven launches) labelled a half-set 2048² image in 45.7 ms where scipy takes 32.9.
//!
//! Every element's parent is an earlier element of its component (union by the smaller index), so a component's
//! root is its first element in raster order, and numbering the roots in raster order is scipy's numbering.
//!
//! An item is cut into strips of rows (z·y) labelled on the host's threads at once, each uniting only within
//! itself (disjoint parts of the parent array); the pairs across a strip's first rows are united afterwards. The
//! numbering runs on the strips at once too: the roots of each strip are listed and counted first, so that a
//! strip's numbers start after the earlier strips' roots, and an element whose root lies in an earlier strip
//! finds its number in that strip's list. Items run on threads of their own when there are enough of them.

use crate::element::RealElement;
use rayon::prelude::*;

/// The parent of an element that takes no part (zero for labelling, non-zero for hole filling).
const NONE: u32 = u32::MAX;

/// Rows per strip at least: fewer would spend more on the strips' joins than they save.
const STRIP_ROWS: usize = 16;

/// A planned labelling of the mapped input: each item's extents (z, y, x), the input's strides (item, z, y, x)
/// and its first element in the mapped region, the items, the structure's neighbour offsets (z, y, x, 0), and
/// whether the zero elements are labelled to fill holes. The output is contiguous, items one after the other.
pub(crate) struct HostLabel {
    pub n: [usize; 3],
    pub strides: [usize; 4],
    pub start: usize,
    pub items: usize,
    pub offsets: Vec<[i32; 4]>,
    pub holes: bool,
}

/// A neighbour earlier in raster order: its offsets and its distance in elements (negative).
#[derive(Clone, Copy)]
struct Back {
    d: [i64; 3],
    step: i64,
}

/// A union-find over the parents of elements `base..base + parent.len()`.
struct Forest<'a> {
    parent: &'a mut [u32],
    base: usize,
}

impl Forest<'_> {
    fn get(&self, i: u32) -> u32 {
        self.parent.get((i as usize).wrapping_sub(self.base)).copied().unwrap_or(NONE)
    }

    fn set(&mut self, i: u32, p: u32) {
        if let Some(slot) = self.parent.get_mut((i as usize).wrapping_sub(self.base)) {
            *slot = p;
        }
    }

    /// The root of `i`, halving the path on the way.
    fn find(&mut self, mut i: u32) -> u32 {
        loop {
            let p = self.get(i);
            if p == i || p == NONE {
                return i;
            }
            let g = self.get(p);
            self.set(i, g);
            i = g;
        }
    }

    /// Joins the components of `a` and `b` under the smaller root.
    fn unite(&mut self, a: u32, b: u32) {
        let root = self.find(a);
        self.join(root, b);
    }

    /// Joins the component of root `root` and that of `b` under the smaller root, which it returns.
    fn join(&mut self, root: u32, b: u32) -> u32 {
        let other = self.find(b);
        match root.cmp(&other) {
            std::cmp::Ordering::Less => self.set(other, root),
            std::cmp::Ordering::Greater => self.set(root, other),
            std::cmp::Ordering::Equal => {}
        }
        root.min(other)
    }
}

impl HostLabel {
    /// Labels every item into `out` (the contiguous output) from `input`; returns each item's feature count (for
    /// hole filling, 0).
    pub(crate) fn run<T: RealElement>(&self, input: &[T], out: &mut [T]) -> Vec<usize> {
        let per_item: usize = self.n.iter().product();
        if per_item == 0 {
            return vec![0; self.items];
        }
        let threads = rayon::current_num_threads();
        let item = |(w, out): (usize, &mut [T]), strips: usize| self.item(input, w, out, strips);
        if self.items >= threads {
            out.par_chunks_mut(per_item).enumerate().map(|c| item(c, 1)).collect()
        } else {
            out.chunks_mut(per_item).enumerate().map(|c| item(c, threads)).collect()
        }
    }

    /// The neighbours earlier in raster order.
    fn backward(&self) -> Vec<Back> {
        let [_, ny, nx] = self.n.map(|n| n as i64);
        self.offsets
            .iter()
            .map(|o| {
                let d = [o[0], o[1], o[2]].map(i64::from);
                Back { d, step: (d[0] * ny + d[1]) * nx + d[2] }
            })
            .filter(|b| b.step < 0)
            .collect()
    }

    /// The neighbours of row `r` (z·ny + y) earlier in raster order that lie in the item and in rows from
    /// `first`: their x offsets and distances.
    fn row_neighbours(&self, back: &[Back], r: usize, first: usize) -> Vec<(i64, i64)> {
        let [nz, ny, _] = self.n.map(|n| n as i64);
        let (z, y) = ((r as i64) / ny, (r as i64) % ny);
        back.iter()
            .filter(|b| {
                let (zz, yy) = (z + b.d[0], y + b.d[1]);
                (0..nz).contains(&zz) && (0..ny).contains(&yy) && zz * ny + yy >= first as i64
            })
            .map(|b| (b.d[2], b.step))
            .collect()
    }

    /// Unites the element at row `r`, column `x` (taking part) with its earlier neighbours in `neighbours`, its
    /// component's root `root`; returns the root after.
    fn unite_row(&self, forest: &mut Forest, neighbours: &[(i64, i64)], r: usize, x: usize, mut root: u32) -> u32 {
        let nx = self.n[2] as i64;
        let i = (r * self.n[2] + x) as i64;
        for &(dx, step) in neighbours {
            let xx = x as i64 + dx;
            if xx < 0 || xx >= nx {
                continue;
            }
            let j = (i + step) as u32;
            if forest.get(j) != NONE {
                root = forest.join(root, j);
            }
        }
        root
    }

    /// Whether a structure neighbour of the element at row `r`, column `x` lies outside the item.
    fn touches_outside(&self, r: usize, x: usize) -> bool {
        let [nz, ny, nx] = self.n.map(|n| n as i64);
        let c = [(r as i64) / ny, (r as i64) % ny, x as i64];
        self.offsets.iter().any(|o| {
            let p = [c[0] + i64::from(o[0]), c[1] + i64::from(o[1]), c[2] + i64::from(o[2])];
            p[0] < 0 || p[1] < 0 || p[2] < 0 || p[0] >= nz || p[1] >= ny || p[2] >= nx
        })
    }

    /// Labels item `w` into `out` (its elements), the rows cut into at most `strips` strips; returns its feature
    /// count.
    fn item<T: RealElement>(&self, input: &[T], w: usize, out: &mut [T], strips: usize) -> usize {
        let [nz, ny, nx] = self.n;
        let rows = nz * ny;
        let per_item = rows * nx;
        let back = self.backward();
        // The outside of the array, for hole filling: one more element, after all the others.
        let outside = per_item as u32;
        let mut parent = vec![NONE; per_item + 1];
        let rows_per_strip = rows.div_ceil(strips.max(1)).max(STRIP_ROWS);
        let strip = rows_per_strip * nx;
        // Each strip on its own: every element's parent an earlier element of the strip.
        let touching: Vec<Vec<u32>> = parent
            .get_mut(..per_item)
            .unwrap_or_default()
            .par_chunks_mut(strip)
            .enumerate()
            .map(|(s, part)| {
                let first = s * rows_per_strip;
                let mut forest = Forest { parent: part, base: first * nx };
                let mut touching = Vec::new();
                for r in first..(first + rows_per_strip).min(rows) {
                    let mut neighbours = self.row_neighbours(&back, r, first);
                    // The left neighbour, when the structure has it, is the run just before: its root is known.
                    let left =
                        neighbours.iter().position(|&(dx, step)| dx == -1 && step == -1).map(|k| neighbours.remove(k));
                    let row =
                        self.start + w * self.strides[0] + (r / ny) * self.strides[1] + (r % ny) * self.strides[2];
                    let mut run = None;
                    for x in 0..nx {
                        let v = input.get(row + x * self.strides[3]).map_or(0.0, |v| v.to_c64().re);
                        if (v == 0.0) != self.holes {
                            run = None;
                            continue;
                        }
                        let i = (r * nx + x) as u32;
                        let root = run.filter(|_| left.is_some()).unwrap_or(i);
                        forest.set(i, root);
                        run = Some(self.unite_row(&mut forest, &neighbours, r, x, root));
                        if self.holes && self.touches_outside(r, x) {
                            touching.push(i);
                        }
                    }
                }
                touching
            })
            .collect();
        let mut forest = Forest { parent: &mut parent, base: 0 };
        // The pairs that cross into an earlier strip: from each strip's first rows, as far back as a neighbour
        // reaches.
        let reach = back.iter().map(|b| (-b.step) as usize).max().unwrap_or(0).div_ceil(nx.max(1));
        for first in (rows_per_strip..rows).step_by(rows_per_strip) {
            for r in first..(first + reach).min(rows) {
                let neighbours = self.row_neighbours(&back, r, 0);
                for x in 0..nx {
                    let i = (r * nx + x) as u32;
                    if forest.get(i) != NONE {
                        let root = forest.find(i);
                        self.unite_row(&mut forest, &neighbours, r, x, root);
                    }
                }
            }
        }
        if self.holes {
            forest.set(outside, outside);
            for i in touching.into_iter().flatten() {
                forest.unite(i, outside);
            }
        }
        let outside_root = forest.find(outside);
        let parent = &parent;
        // Roots (each component's first element) per strip, in raster order, and the numbers before each strip.
        let roots: Vec<Vec<u32>> = (0..per_item.div_ceil(strip))
            .into_par_iter()
            .map(|s| {
                let lo = s * strip;
                let part = parent.get(lo..(lo + strip).min(per_item)).unwrap_or_default();
                (lo as u32..).zip(part).filter(|&(i, &p)| p == i).map(|(i, _)| i).collect()
            })
            .collect();
        let before: Vec<usize> = roots
            .iter()
            .scan(0, |sum, r| {
                let start = *sum;
                *sum += r.len();
                Some(start)
            })
            .collect();
        let root_of = |mut i: u32| loop {
            match parent.get(i as usize) {
                Some(&p) if p != i && p != NONE => i = p,
                _ => return i,
            }
        };
        // Numbers in raster order: a root's is its rank among all roots. Any other element's parent is earlier;
        // in the same strip its number is written already (it is the root's), else the root is looked up in its
        // strip's list.
        out.par_chunks_mut(strip).enumerate().for_each(|(s, out)| {
            let lo = s * strip;
            let mut next = before.get(s).copied().unwrap_or(0);
            for k in 0..out.len() {
                let i = lo + k;
                let p = parent.get(i).copied().unwrap_or(NONE);
                let value = if p == NONE {
                    f64::from(u8::from(self.holes))
                } else if p as usize >= lo && p as usize != i {
                    out.get(p as usize - lo).map_or(0.0, |v| v.to_c64().re)
                } else if self.holes {
                    // A hole is a component of zeros that does not reach the outside.
                    f64::from(u8::from(root_of(p) != outside_root))
                } else if p as usize == i {
                    next += 1;
                    next as f64
                } else {
                    let root = root_of(p) as usize;
                    let strip_of = root / strip;
                    let rank = roots.get(strip_of).and_then(|r| r.binary_search(&(root as u32)).ok()).unwrap_or(0);
                    (before.get(strip_of).copied().unwrap_or(0) + rank + 1) as f64
                };
                if let Some(o) = out.get_mut(k) {
                    *o = T::from_c64(value.into());
                }
            }
        });
        if self.holes { 0 } else { roots.iter().map(Vec::len).sum() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Components by flood fill, numbered in raster order of their first element (scipy's rule).
    fn reference(n: [usize; 3], set: &[bool], offsets: &[[i32; 4]]) -> Vec<usize> {
        let mut label = vec![0; set.len()];
        let mut next = 0;
        for s in 0..set.len() {
            if !set[s] || label[s] != 0 {
                continue;
            }
            next += 1;
            label[s] = next;
            let mut stack = vec![s];
            while let Some(i) = stack.pop() {
                let c = [i / (n[1] * n[2]), (i / n[2]) % n[1], i % n[2]];
                for o in offsets {
                    let p: Vec<i64> = (0..3).map(|k| c[k] as i64 + i64::from(o[k])).collect();
                    if (0..3).any(|k| p[k] < 0 || p[k] >= n[k] as i64) {
                        continue;
                    }
                    let j = (p[0] as usize * n[1] + p[1] as usize) * n[2] + p[2] as usize;
                    if set[j] && label[j] == 0 {
                        label[j] = next;
                        stack.push(j);
                    }
                }
            }
        }
        label
    }

    fn structure(full: bool) -> Vec<[i32; 4]> {
        let mut offsets = vec![];
        for z in -1..=1i32 {
            for y in -1..=1i32 {
                for x in -1..=1i32 {
                    let k = z.abs() + y.abs() + x.abs();
                    if k > 0 && (full || k == 1) {
                        offsets.push([z, y, x, 0]);
                    }
                }
            }
        }
        offsets
    }

    #[test]
    fn strips_and_items_number_as_a_flood_fill_does() {
        // Two items of 37×41×29 (strided: x every 2), about 45 % set; faces, and every neighbour.
        let n = [37usize, 41, 29];
        let per = n.iter().product::<usize>();
        let strides = [per * 2, 41 * 29 * 2, 29 * 2, 2];
        let values: Vec<f32> = (0..2 * per * 2).map(|i| f32::from(u8::from((i * 7919 + i / 5) % 100 < 45))).collect();
        for full in [false, true] {
            for strips in [1, 3, 8] {
                let p = HostLabel { n, strides, start: 0, items: 2, offsets: structure(full), holes: false };
                let mut out = vec![-1.0f32; 2 * per];
                for (w, o) in out.chunks_mut(per).enumerate() {
                    let count = p.item(&values, w, o, strips);
                    let set: Vec<bool> = (0..per).map(|i| values[w * per * 2 + i * 2] != 0.0).collect();
                    let want = reference(n, &set, &structure(full));
                    assert_eq!(count, *want.iter().max().unwrap());
                    let got: Vec<usize> = o.iter().map(|&v| v as usize).collect();
                    assert_eq!(got, want, "full {full}, {strips} strips, item {w}");
                }
            }
        }
    }

    #[test]
    fn holes_are_the_background_away_from_the_edges() {
        // 1-D rows of a 2-D image: a ring of ones around zeros, and zeros open to the edge.
        let rows = ["0000000", "0111110", "0100010", "0111110", "0001000", "0100000"];
        let values: Vec<f64> = rows.iter().flat_map(|r| r.bytes().map(|b| f64::from(b - b'0'))).collect();
        let p = HostLabel {
            n: [1, 6, 7],
            strides: [42, 42, 7, 1],
            start: 0,
            items: 1,
            offsets: vec![[0, -1, 0, 0], [0, 0, -1, 0], [0, 0, 1, 0], [0, 1, 0, 0]],
            holes: true,
        };
        for strips in [1, 2] {
            let mut out = vec![-1.0; 42];
            p.item(&values, 0, &mut out, strips);
            let want: Vec<f64> = ["0000000", "0111110", "0111110", "0111110", "0001000", "0100000"]
                .iter()
                .flat_map(|r| r.bytes().map(|b| f64::from(b - b'0')))
                .collect();
            assert_eq!(out, want);
        }
    }
}

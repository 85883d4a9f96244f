//! scikit-image's priority flood (`watershed_raveled` of skimage 0.26), its markers when none are given (the
//! labelled plateaus of `local_minima`), on host slices of a padded grid. Sequential by nature: each element's
//! label depends on the order the queue hands them out, so it runs on one core.

use super::grid::PaddedGrid;

/// An element waiting in the queue: its priority (`value`, then `age`, the order it was pushed in), where it is
/// and the marker element it was reached from.
#[derive(Clone, Copy)]
struct Entry {
    value: f64,
    age: i32,
    index: usize,
    source: usize,
}

/// scikit-image's order: the lower value first, then the earlier push. (With a NaN the values compare unequal
/// and neither is lower, as in the C comparison.)
fn before(a: &Entry, b: &Entry) -> bool {
    if a.value != b.value { a.value < b.value } else { a.age < b.age }
}

/// A binary min-heap that moves its entries exactly as scikit-image's `heap_general.pxi` does (the last entry
/// to the root on a pop, then down towards the smaller child, the left one on a tie; up while strictly before
/// the parent on a push), so that entries of equal priority — markers all have age 0 — leave in the same order.
/// std's BinaryHeap sifts differently and would hand such ties out in another order.
struct FloodQueue {
    entries: Vec<Entry>,
}

impl FloodQueue {
    fn with_capacity(capacity: usize) -> FloodQueue {
        FloodQueue { entries: Vec::with_capacity(capacity) }
    }

    fn precedes(&self, a: usize, b: usize) -> bool {
        matches!((self.entries.get(a), self.entries.get(b)), (Some(x), Some(y)) if before(x, y))
    }

    fn push(&mut self, entry: Entry) {
        self.entries.push(entry);
        let mut child = self.entries.len() - 1;
        while child > 0 {
            let parent = (child - 1) / 2;
            if !self.precedes(child, parent) {
                break;
            }
            self.entries.swap(child, parent);
            child = parent;
        }
    }

    fn pop(&mut self) -> Option<Entry> {
        if self.entries.is_empty() {
            return None;
        }
        let top = self.entries.swap_remove(0);
        let count = self.entries.len();
        let mut at = 0;
        loop {
            let (left, right) = (2 * at + 1, 2 * at + 2);
            if left >= count {
                break;
            }
            let mut smallest = at;
            if self.precedes(left, smallest) {
                smallest = left;
            }
            if right < count && self.precedes(right, smallest) {
                smallest = right;
            }
            if smallest == at {
                break;
            }
            self.entries.swap(at, smallest);
            at = smallest;
        }
        Some(top)
    }
}

/// What the flood floods: the padded grid's values, which elements it may enter, and how.
pub(super) struct Flood<'a> {
    /// The image on the padded grid (as float64, scikit-image's type).
    pub image: &'a [f64],
    /// Whether each element may be flooded (the mask; false on the padding). The watershed line clears it.
    pub mask: &'a mut [bool],
    /// The labels: the markers on entry, the basins on return.
    pub labels: &'a mut [i64],
    /// Flat offsets to each neighbour, in scikit-image's order.
    pub neighbours: &'a [isize],
    /// The padded grid's strides (for the compact watershed's distances).
    pub strides: &'a [usize],
    pub compactness: f64,
    pub watershed_line: bool,
}

impl Flood<'_> {
    /// Floods from every labelled element (in C order, all of age 0), lowest value first, ties in the order they
    /// were pushed.
    pub(super) fn run(&mut self) {
        let compact = self.compactness > 0.0;
        let mut queue = FloodQueue::with_capacity(self.labels.len().min(1 << 20));
        for (index, _) in self.labels.iter().enumerate().filter(|(_, l)| **l != 0) {
            let value = self.image.get(index).copied().unwrap_or(0.0);
            queue.push(Entry { value, age: 0, index, source: index });
        }
        // scikit-image counts pushes in a Py_ssize_t and stores them in a 32-bit field: the wrap is kept.
        let mut age: i64 = 1;
        while let Some(entry) = queue.pop() {
            let label = self.labels.get(entry.source).copied().unwrap_or(0);
            if compact || self.watershed_line {
                // Labelled when taken off the queue: an element may be pushed more than once (compactness), and
                // only now are all its neighbours that came first labelled (the line).
                let here = self.labels.get(entry.index).copied().unwrap_or(0);
                if here != 0 && entry.index != entry.source {
                    continue;
                }
                if (compact || !self.on_line(entry.index, label))
                    && let Some(slot) = self.labels.get_mut(entry.index)
                {
                    *slot = label;
                }
            }
            let reached = self.labels.get(entry.index).copied().unwrap_or(0);
            for &offset in self.neighbours {
                let Some(next) = entry.index.checked_add_signed(offset) else { continue };
                if !self.mask.get(next).copied().unwrap_or(false) || self.labels.get(next).is_none_or(|&l| l != 0) {
                    continue;
                }
                age += 1;
                let mut value = self.image.get(next).copied().unwrap_or(0.0);
                if compact {
                    value += self.compactness * distance(next, entry.source, self.strides);
                } else if !self.watershed_line {
                    // Plain flooding labels on push: nothing can reach the element at a lower cost later.
                    if let Some(slot) = self.labels.get_mut(next) {
                        *slot = reached;
                    }
                }
                // Never cheaper than the element it came from, so that two markers share a basin by age.
                if value < entry.value {
                    value = entry.value;
                }
                queue.push(Entry { value, age: age as i32, index: next, source: entry.source });
            }
        }
    }

    /// Whether `index` belongs on the watershed line: it is already off the mask, or a neighbour still on it holds
    /// a label other than `label` (then it leaves the mask).
    fn on_line(&mut self, index: usize, label: i64) -> bool {
        if !self.mask.get(index).copied().unwrap_or(false) {
            return true;
        }
        for &offset in self.neighbours {
            let Some(next) = index.checked_add_signed(offset) else { continue };
            if !self.mask.get(next).copied().unwrap_or(false) {
                continue;
            }
            let other = self.labels.get(next).copied().unwrap_or(0);
            if other != 0 && other != label {
                if let Some(m) = self.mask.get_mut(index) {
                    *m = false;
                }
                return true;
            }
        }
        false
    }
}

/// The Euclidean distance between two flat indices of a grid of `strides`, summed axis by axis as scikit-image
/// does (the same float64 result).
fn distance(mut a: usize, mut b: usize, strides: &[usize]) -> f64 {
    let mut sum = 0.0f64;
    for &stride in strides {
        let stride = stride.max(1);
        let step = (a / stride) as f64 - (b / stride) as f64;
        sum += step * step;
        a %= stride;
        b %= stride;
    }
    sum.sqrt()
}

/// Flags of [`local_minima`]'s plateau search (scikit-image's `_extrema_cy`).
const NOT_MINIMUM: u8 = 0;
const QUEUED: u8 = 1;
const CANDIDATE: u8 = 2;
const BORDER: u8 = 3;

/// scikit-image's `local_minima(image, connectivity)` (borders allowed) on the grid `grid` padded by one: whether
/// each element of `values` (C order over the inner grid) lies on a plateau no neighbour of which is lower. As
/// scikit-image, the padding holds the image's maximum (NaN when the image holds one), so a plateau at the maximum
/// that touches the edge is none; `neighbours` are the connectivity's offsets on the padded grid.
pub(super) fn local_minima(grid: &PaddedGrid, values: &[f64], neighbours: &[isize]) -> Vec<bool> {
    if values.is_empty() {
        return Vec::new();
    }
    let inner = grid.inner_indices();
    // The maximum as numpy's min of the negated image: NaN wins.
    let top = values.iter().fold(f64::NEG_INFINITY, |m, &v| if v.is_nan() || m.is_nan() { f64::NAN } else { m.max(v) });
    let heights = grid.padded(values.iter().map(|v| -v), -top, &inner);
    let mut flags = vec![BORDER; grid.len()];
    for &at in &inner {
        if let Some(f) = flags.get_mut(at) {
            *f = NOT_MINIMUM;
        }
    }
    if neighbours.contains(&-1) && neighbours.contains(&1) {
        mark_rises_along_rows(&heights, &mut flags);
    } else {
        for f in flags.iter_mut().filter(|f| **f != BORDER) {
            *f = CANDIDATE;
        }
    }
    let mut plateau = Vec::new();
    for start in 0..flags.len() {
        if flags.get(start) == Some(&CANDIDATE) {
            fill_plateau(&heights, &mut flags, neighbours, start, &mut plateau);
        }
    }
    inner.iter().map(|&at| flags.get(at) == Some(&QUEUED)).collect()
}

/// Marks as candidates the runs of equal (negated) heights that are higher than the element before and after them
/// along the flat order: a necessary condition when the row's neighbours are in the neighbourhood, which spares
/// most elements the plateau search.
fn mark_rises_along_rows(heights: &[f64], flags: &mut [u8]) {
    let at = |i: usize| heights.get(i).copied().unwrap_or(f64::NAN);
    let mut i = 1;
    while i < heights.len() {
        if at(i - 1) < at(i) && flags.get(i) != Some(&BORDER) {
            let mut ahead = i + 1;
            while ahead < heights.len() && at(i) == at(ahead) && flags.get(ahead) != Some(&BORDER) {
                ahead += 1;
            }
            if at(i) > at(ahead) {
                for f in flags.iter_mut().take(ahead).skip(i) {
                    *f = CANDIDATE;
                }
            }
            i = ahead;
        } else {
            i += 1;
        }
    }
}

/// Searches the plateau of `start` (its connected elements of the same height) and flags it a maximum of the
/// negated heights (QUEUED) unless it touches the border at its height or has a higher neighbour (then
/// NOT_MINIMUM).
fn fill_plateau(heights: &[f64], flags: &mut [u8], neighbours: &[isize], start: usize, plateau: &mut Vec<usize>) {
    let height = heights.get(start).copied().unwrap_or(f64::NAN);
    let mut is_extremum = true;
    plateau.clear();
    plateau.push(start);
    if let Some(f) = flags.get_mut(start) {
        *f = QUEUED;
    }
    let mut next = 0;
    while let Some(&current) = plateau.get(next) {
        next += 1;
        for &offset in neighbours {
            let Some(neighbour) = current.checked_add_signed(offset) else { continue };
            let value = heights.get(neighbour).copied().unwrap_or(f64::NAN);
            if value == height {
                match flags.get(neighbour) {
                    Some(&BORDER) => is_extremum = false,
                    Some(&QUEUED) | None => {}
                    Some(_) => {
                        plateau.push(neighbour);
                        if let Some(f) = flags.get_mut(neighbour) {
                            *f = QUEUED;
                        }
                    }
                }
            } else if value > height {
                is_extremum = false;
            }
        }
    }
    if !is_extremum {
        for &at in plateau.iter() {
            if let Some(f) = flags.get_mut(at) {
                *f = NOT_MINIMUM;
            }
        }
    }
}

/// scipy.ndimage.label of `on` (the padded grid's elements, false on the padding) over `neighbours`: the
/// connected components numbered 1, 2, … in the C order of their first element.
pub(super) fn label_components(on: &[bool], neighbours: &[isize]) -> Vec<i64> {
    let mut labels = vec![0i64; on.len()];
    let mut count = 0i64;
    let mut stack = Vec::new();
    for start in 0..on.len() {
        if !on.get(start).copied().unwrap_or(false) || labels.get(start).is_none_or(|&l| l != 0) {
            continue;
        }
        count += 1;
        stack.push(start);
        if let Some(l) = labels.get_mut(start) {
            *l = count;
        }
        while let Some(current) = stack.pop() {
            for &offset in neighbours {
                let Some(next) = current.checked_add_signed(offset) else { continue };
                if on.get(next).copied().unwrap_or(false) && labels.get(next) == Some(&0) {
                    if let Some(l) = labels.get_mut(next) {
                        *l = count;
                    }
                    stack.push(next);
                }
            }
        }
    }
    labels
}

//! scipy.ndimage.watershed_ift's image foresting transform (`NI_WatershedIFT` of scipy 1.17) on host slices.

/// No element: the end of a bucket's list.
const NONE: usize = usize::MAX;

/// The buckets of elements waiting at each cost, as doubly linked lists threaded through the elements, exactly as
/// scipy links them — including its quirk that an element alone in its bucket has no links and so is not unlinked
/// when its cost drops (scipy then takes it out of that bucket again later): the order elements are taken out
/// decides which label wins a tie.
struct Buckets {
    first: Vec<usize>,
    last: Vec<usize>,
    next: Vec<usize>,
    prev: Vec<usize>,
}

fn at(v: &[usize], i: usize) -> usize {
    v.get(i).copied().unwrap_or(NONE)
}

fn set(v: &mut [usize], i: usize, value: usize) {
    if let Some(slot) = v.get_mut(i) {
        *slot = value;
    }
}

impl Buckets {
    fn new(costs: usize, elements: usize) -> Buckets {
        Buckets {
            first: vec![NONE; costs],
            last: vec![NONE; costs],
            next: vec![NONE; elements],
            prev: vec![NONE; elements],
        }
    }

    fn push_front(&mut self, bucket: usize, element: usize) {
        let head = at(&self.first, bucket);
        set(&mut self.next, element, head);
        set(&mut self.prev, element, NONE);
        if head != NONE {
            set(&mut self.prev, head, element);
        }
        set(&mut self.first, bucket, element);
        if at(&self.last, bucket) == NONE {
            set(&mut self.last, bucket, element);
        }
    }

    fn push_back(&mut self, bucket: usize, element: usize) {
        let tail = at(&self.last, bucket);
        set(&mut self.prev, element, tail);
        set(&mut self.next, element, NONE);
        if tail != NONE {
            set(&mut self.next, tail, element);
        }
        set(&mut self.last, bucket, element);
        if at(&self.first, bucket) == NONE {
            set(&mut self.first, bucket, element);
        }
    }

    /// Unlinks `element` from `bucket` when it has links (scipy's test).
    fn unlink(&mut self, bucket: usize, element: usize) {
        let (prev, next) = (at(&self.prev, element), at(&self.next, element));
        if prev == NONE && next == NONE {
            return;
        }
        if at(&self.first, bucket) == element {
            set(&mut self.first, bucket, next);
        }
        if at(&self.last, bucket) == element {
            set(&mut self.last, bucket, prev);
        }
        if prev != NONE {
            set(&mut self.next, prev, next);
        }
        if next != NONE {
            set(&mut self.prev, next, prev);
        }
    }

    fn pop_front(&mut self, bucket: usize) -> Option<usize> {
        let element = at(&self.first, bucket);
        if element == NONE {
            return None;
        }
        let next = at(&self.next, element);
        set(&mut self.first, bucket, next);
        if next != NONE {
            set(&mut self.prev, next, NONE);
        }
        set(&mut self.prev, element, NONE);
        set(&mut self.next, element, NONE);
        Some(element)
    }
}

/// The flat offsets of `structure`'s taps (a 3×…×3 box, row-major flags) in a C-ordered grid of `shape`, in the
/// box's order, the centre left out.
pub(super) fn structure_offsets(shape: &[usize], structure: &[bool]) -> Vec<isize> {
    let mut strides = vec![1isize; shape.len()];
    for axis in (0..shape.len().saturating_sub(1)).rev() {
        let next = strides.get(axis + 1).copied().unwrap_or(1) * shape.get(axis + 1).map_or(1, |&n| n as isize);
        set_isize(&mut strides, axis, next);
    }
    let mut offsets = Vec::new();
    for (tap, _) in structure.iter().enumerate().filter(|(_, on)| **on) {
        let mut rest = tap;
        let mut offset = 0isize;
        for axis in (0..shape.len()).rev() {
            offset += ((rest % 3) as isize - 1) * strides.get(axis).copied().unwrap_or(0);
            rest /= 3;
        }
        if offset != 0 {
            offsets.push(offset);
        }
    }
    offsets
}

fn set_isize(v: &mut [isize], i: usize, value: isize) {
    if let Some(slot) = v.get_mut(i) {
        *slot = value;
    }
}

/// watershed_ift of `image` (values 0 to 65535) from `markers` (C order, the labels in `labels`, which the
/// transform overwrites): markers enter cost 0 — positive ones at the front, negative ones at the back of the
/// bucket —, then buckets are emptied in order of cost, each element giving its neighbours (the flat `offsets`;
/// as scipy, a neighbour is any element of the array at that offset, so rows wrap) its label when the larger of
/// its cost and their difference in value is below theirs. `None` when the lists scipy keeps loop (its own run
/// would not end).
pub(super) fn watershed_ift(image: &[u32], labels: &mut [i32], offsets: &[isize]) -> Option<()> {
    let size = image.len();
    let top = image.iter().copied().max().unwrap_or(0) as usize;
    let mut cost = vec![top as u32 + 1; size];
    let mut done = vec![false; size];
    let mut buckets = Buckets::new(top + 1, size);
    for (element, &label) in labels.iter().enumerate().filter(|(_, l)| **l != 0) {
        if let Some(c) = cost.get_mut(element) {
            *c = 0;
        }
        if label > 0 { buckets.push_front(0, element) } else { buckets.push_back(0, element) }
    }
    // An element is taken out once, and again from each bucket it was alone in when its cost dropped — at most
    // once per neighbour: more means the lists loop.
    let mut budget = size.saturating_mul(offsets.len() + 2).saturating_add(2);
    for bucket in 0..=top {
        while let Some(v) = buckets.pop_front(bucket) {
            budget = budget.checked_sub(1)?;
            if let Some(d) = done.get_mut(v) {
                *d = true;
            }
            let v_value = image.get(v).copied().unwrap_or(0);
            let v_cost = cost.get(v).copied().unwrap_or(0);
            for &offset in offsets {
                let Some(p) = v.checked_add_signed(offset).filter(|&p| p < size) else { continue };
                if done.get(p).copied().unwrap_or(true) {
                    continue;
                }
                let step = image.get(p).copied().unwrap_or(0).abs_diff(v_value);
                let reach = v_cost.max(step);
                let p_cost = cost.get(p).copied().unwrap_or(0);
                if reach >= p_cost {
                    continue;
                }
                if let Some(c) = cost.get_mut(p) {
                    *c = reach;
                }
                let label = labels.get(v).copied().unwrap_or(0);
                if let Some(l) = labels.get_mut(p) {
                    *l = label;
                }
                buckets.unlink(p_cost as usize, p);
                if label < 0 {
                    buckets.push_back(reach as usize, p);
                } else {
                    buckets.push_front(reach as usize, p);
                }
            }
        }
    }
    Some(())
}

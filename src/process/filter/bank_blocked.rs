//! `bank_blocked` for [`super::FilterBank`]: the shape of its work-groups and what it needs (the kernel and why it
//! is laid out so are in filter_bank.cl).

/// Consecutive outputs of a row per work-item and filter.
const COLS: usize = 4;
/// Work-items per group along a row (16 × 4 = 64 outputs of a row) and across rows. H200, device ms, 16 × 8
/// against 16 × 4: seed 004's 10×4×128² ⊛ 10×4×16² 0.116 against 0.127, 16×3×128² ⊛ 16×3×7² 0.052 against
/// 0.058, 4×1×512² ⊛ 8×1×11² 0.065 against 0.071, 8×8×128² ⊛ 8×8×3² 0.0227 against 0.0218; 8 outputs per
/// work-item with 8 filters per block was slower everywhere but seed 004 (3 × 3 filters: 0.031 against 0.022).
const GROUP: [usize; 2] = [16, 8];
/// Most filters per block: a work-item holds `COLS` accumulators per filter of its block.
const MAX_FILTERS: usize = 16;
/// Most taps per filter axis: a work-item holds a row segment of `COLS + S − 1` input values.
const MAX_TAPS: usize = 32;

/// One `bank_blocked` launch's shape: filters of `taps` (R, S) in blocks of `filters`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct BlockShape {
    taps: [usize; 2],
    filters: usize,
}

impl BlockShape {
    /// The shape for `k` filters of `taps` with elements of `element` bytes, when the filter fits a work-item's
    /// registers and the staged tile and weights fit `local_mem` bytes; `None` otherwise. The filters are split into
    /// the fewest blocks of at most 16, evenly (20 filters: two blocks of 10).
    pub(super) fn new(k: usize, taps: [usize; 2], element: usize, local_mem: u64) -> Option<BlockShape> {
        let blocks = k.max(1).div_ceil(MAX_FILTERS);
        let shape = BlockShape { taps, filters: k.max(1).div_ceil(blocks) };
        let fits = taps.iter().all(|&t| (1..=MAX_TAPS).contains(&t));
        (fits && (shape.local_elements() * element) as u64 <= local_mem).then_some(shape)
    }

    /// Elements of local memory: the input tile with its halo and the block's weights.
    fn local_elements(&self) -> usize {
        let [r, s] = self.taps;
        (GROUP[1] + r - 1) * (GROUP[0] * COLS + s - 1) + r * s * self.filters
    }

    /// Filters per block and outputs per work-item along a row.
    pub(super) fn filters_and_cols(&self) -> (usize, usize) {
        (self.filters, COLS)
    }

    /// Work-items per group.
    pub(super) fn group_size(&self) -> usize {
        GROUP[0] * GROUP[1]
    }

    /// The build options that specialise filter_bank.cl's `bank_blocked` to this shape.
    pub(super) fn build_options(&self) -> String {
        let [r, s] = self.taps;
        format!(
            " -DBLOCK_R={r} -DBLOCK_S={s} -DBLOCK_K={} -DBLOCK_QX={COLS} -DBLOCK_WX={} -DBLOCK_WY={}",
            self.filters, GROUP[0], GROUP[1]
        )
    }

    /// Column tiles, row tiles and filter blocks for `k` filters and outputs of `[p, q]`, and the groups over `n`
    /// images; `None` when the groups exceed the kernel's 32-bit count.
    pub(super) fn grid(&self, n: usize, k: usize, [p, q]: [usize; 2]) -> Option<([i32; 3], usize)> {
        let counts = [q.div_ceil(GROUP[0] * COLS), p.div_ceil(GROUP[1]), k.div_ceil(self.filters)];
        let groups = counts.iter().try_fold(n, |acc, &v| acc.checked_mul(v))?;
        let narrow = |v: usize| i32::try_from(v).ok();
        (groups <= i32::MAX as usize).then_some(())?;
        Some(([narrow(counts[0])?, narrow(counts[1])?, narrow(counts[2])?], groups))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_split_evenly_and_the_tile_must_fit() {
        // Seed 004: 10 filters of 16 × 16 in one block; 20 in two of 10; 33 in three of 11.
        assert_eq!(BlockShape::new(10, [16, 16], 4, 48 << 10).map(|b| b.filters), Some(10));
        assert_eq!(BlockShape::new(20, [3, 3], 4, 48 << 10).map(|b| b.filters), Some(10));
        assert_eq!(BlockShape::new(33, [3, 3], 4, 48 << 10).map(|b| b.filters), Some(11));
        // 16 × 16 taps, 10 filters: (8 + 15)·(64 + 15) + 2560 = 4377 elements, 17 508 bytes of float.
        let seed = BlockShape::new(10, [16, 16], 4, 48 << 10).unwrap();
        assert_eq!(seed.local_elements(), 4377);
        assert!(BlockShape::new(10, [16, 16], 8, 35_015).is_none());
        assert!(BlockShape::new(10, [16, 16], 8, 35_016).is_some());
        // Past 32 taps along an axis: not this kernel.
        assert!(BlockShape::new(4, [33, 3], 4, 1 << 20).is_none());
        // 113 × 113 outputs: 2 column tiles, 15 row tiles; 10 images × 1 block.
        assert_eq!(seed.grid(10, 10, [113, 113]), Some(([2, 15, 1], 300)));
        assert_eq!(seed.grid(1 << 20, 10, [1 << 12, 1 << 12]), None);
    }
}

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
/// Most channels staged at once (one pair of barriers each time), where local memory holds them. On GPUs only for
/// filters of at most `MANY_CHANNELS_TAPS` taps. H200, device ms, one channel against four: 8×8×128² ⊛ 8×8×3²
/// 0.0213 against 0.0174, 8×16×64² ⊛ 32×16×5² 0.059–0.061 against 0.0575, 8×32×64² ⊛ 32×32×5² 0.114–0.116
/// against 0.110; but larger filters lost (16×3×128² ⊛ 32×3×7²: 0.095 against 0.101; seed 004's 16 × 16 taps,
/// two channels: 0.149 against 0.155). PoCL, where each barrier costs, gains everywhere (2×8×32² ⊛ 8×8×5²: 2.07 ms
/// against 0.54).
const MAX_CHANNELS: usize = 4;
/// Taps (R·S) up to which GPUs stage several channels at once.
const MANY_CHANNELS_TAPS: usize = 25;

/// One `bank_blocked` launch's shape: filters of `taps` (R, S) in blocks of `filters`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct BlockShape {
    taps: [usize; 2],
    filters: usize,
    /// Channels staged at once.
    channels: usize,
}

impl BlockShape {
    /// The shape for `k` filters of `c` channels and `taps` with elements of `element` bytes, when the filter fits
    /// a work-item's registers and one channel's staged tile and weights fit `local_mem` bytes; `None` otherwise.
    /// The filters are split into the fewest blocks of at most 16, evenly (20 filters: two blocks of 10); up to 4
    /// channels are staged at once, as many as local memory holds (on GPUs `cpu` false, for filters of at most
    /// 25 taps).
    pub(super) fn new(
        k: usize,
        c: usize,
        taps: [usize; 2],
        element: usize,
        local_mem: u64,
        cpu: bool,
    ) -> Option<BlockShape> {
        let blocks = k.max(1).div_ceil(MAX_FILTERS);
        let one = BlockShape { taps, filters: k.max(1).div_ceil(blocks), channels: 1 };
        let fits = |shape: &BlockShape| (shape.local_elements() * element) as u64 <= local_mem;
        let taps_fit = taps.iter().all(|&t| (1..=MAX_TAPS).contains(&t));
        (taps_fit && fits(&one)).then_some(())?;
        let most = if cpu || taps[0] * taps[1] <= MANY_CHANNELS_TAPS { MAX_CHANNELS } else { 1 };
        let channels =
            (1..=most.min(c.max(1))).rev().find(|&channels| fits(&BlockShape { channels, ..one })).unwrap_or(1);
        Some(BlockShape { channels, ..one })
    }

    /// Elements of local memory: the input tiles with their halo and the block's weights, per channel staged.
    fn local_elements(&self) -> usize {
        let [r, s] = self.taps;
        self.channels * ((GROUP[1] + r - 1) * (GROUP[0] * COLS + s - 1) + r * s * self.filters)
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
            " -DBLOCK_R={r} -DBLOCK_S={s} -DBLOCK_K={} -DBLOCK_CB={} -DBLOCK_QX={COLS} -DBLOCK_WX={} -DBLOCK_WY={}",
            self.filters, self.channels, GROUP[0], GROUP[1]
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
        assert_eq!(BlockShape::new(10, 4, [16, 16], 4, 48 << 10, true).map(|b| b.filters), Some(10));
        assert_eq!(BlockShape::new(20, 4, [3, 3], 4, 48 << 10, true).map(|b| b.filters), Some(10));
        assert_eq!(BlockShape::new(33, 4, [3, 3], 4, 48 << 10, true).map(|b| b.filters), Some(11));
        // 16 × 16 taps, 10 filters: (8 + 15)·(64 + 15) + 2560 = 4377 elements per channel, 17 508 bytes of float:
        // on a CPU two channels at once fit 48 KiB, three do not; a GPU stages one at a time past 25 taps.
        let seed = BlockShape::new(10, 4, [16, 16], 4, 48 << 10, true).unwrap();
        assert_eq!((seed.channels, seed.local_elements()), (2, 2 * 4377));
        let seed_gpu = BlockShape::new(10, 4, [16, 16], 4, 48 << 10, false).unwrap();
        assert_eq!((seed_gpu.channels, seed_gpu.local_elements()), (1, 4377));
        assert_eq!(BlockShape::new(32, 32, [5, 5], 4, 48 << 10, false).map(|b| b.channels), Some(4));
        assert_eq!(BlockShape::new(32, 32, [7, 5], 4, 48 << 10, false).map(|b| b.channels), Some(1));
        assert_eq!(BlockShape::new(10, 1, [16, 16], 4, 48 << 10, true).map(|b| b.channels), Some(1));
        assert!(BlockShape::new(10, 4, [16, 16], 8, 35_015, true).is_none());
        assert_eq!(BlockShape::new(10, 4, [16, 16], 8, 35_016, true).map(|b| b.channels), Some(1));
        // 5 × 5 taps, 16 filters: (8 + 4)·(64 + 4) + 400 = 1216 elements; four channels, but never more than C.
        assert_eq!(BlockShape::new(32, 32, [5, 5], 4, 48 << 10, true).map(|b| b.channels), Some(4));
        assert_eq!(BlockShape::new(32, 3, [5, 5], 4, 48 << 10, true).map(|b| b.channels), Some(3));
        // Past 32 taps along an axis: not this kernel.
        assert!(BlockShape::new(4, 4, [33, 3], 4, 1 << 20, true).is_none());
        // 113 × 113 outputs: 2 column tiles, 15 row tiles; 10 images × 1 block.
        assert_eq!(seed.grid(10, 10, [113, 113]), Some(([2, 15, 1], 300)));
        assert_eq!(seed.grid(1 << 20, 10, [1 << 12, 1 << 12]), None);
    }
}

//! Column-major (Fortran, BART's CFL) ↔ row-major (C) order of an N-D array's elements by blocked transposes: one
//! cache-friendly pass per axis, where iterating a transposed ndarray view element by element walks memory with a
//! stride of the whole array's other axes (perf: most of a CFL read or write went there).

/// Tile side of the blocked transposes: 32 × 32 elements of up to 16 bytes stay in L1.
const TILE: usize = 32;

/// `values` (column-major, first axis fastest, extents `dims`) in row-major order (last axis fastest). Extents of 1
/// are skipped (they move nothing); the column-major order of `dims` reversed is the row-major order of `dims`, so
/// the same function turns row-major data of extents `dims` into column-major with `dims` reversed.
pub(super) fn column_to_row_major<E: Copy + Default>(values: &[E], dims: &[usize]) -> Vec<E> {
    let dims: Vec<usize> = dims.iter().copied().filter(|&n| n != 1).collect();
    if values.is_empty() || dims.contains(&0) || dims.iter().product::<usize>() != values.len() {
        // Nothing to move (an empty array), or extents that do not describe `values`: callers check the extents
        // against the data first; the values are returned as they are rather than reordered by a wrong shape.
        return values.to_vec();
    }
    let mut current = values.to_vec();
    let mut scratch = vec![E::default(); values.len()];
    // Step k moves axis k (of the remaining column-major axes k…) to the front of each block: a block of
    // `rest = Π dims[k+1..]` rows of `dims[k]` elements becomes `dims[k]` rows of `rest` elements. After every
    // step the axes already moved are row-major and outermost.
    let mut outer = 1usize;
    for (k, &n) in dims.iter().enumerate() {
        let rest: usize = dims.iter().skip(k + 1).product();
        if rest <= 1 {
            break;
        }
        let block = n * rest;
        for (src, dst) in current.chunks_exact(block).zip(scratch.chunks_exact_mut(block)).take(outer) {
            transpose(src, dst, rest, n);
        }
        std::mem::swap(&mut current, &mut scratch);
        outer *= n;
    }
    current
}

/// `dst` (`cols × rows`, row-major) = the transpose of `src` (`rows × cols`, row-major), by tiles.
fn transpose<E: Copy>(src: &[E], dst: &mut [E], rows: usize, cols: usize) {
    for r0 in (0..rows).step_by(TILE) {
        for c0 in (0..cols).step_by(TILE) {
            for r in r0..(r0 + TILE).min(rows) {
                let row = src.get(r * cols..(r + 1) * cols).unwrap_or_default();
                for (c, &v) in row.iter().enumerate().skip(c0).take(TILE) {
                    if let Some(slot) = dst.get_mut(c * rows + r) {
                        *slot = v;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::column_to_row_major;
    use ndarray::{ArrayD, IxDyn, ShapeBuilder};

    /// Against ndarray's own reordering, on shapes with extents of 1, odd extents and up to five axes, both ways.
    #[test]
    fn reorders_as_ndarray_does() {
        for dims in [vec![7], vec![3, 5], vec![46, 38, 1, 8], vec![1, 4, 1], vec![5, 3, 2, 7, 3], vec![33, 65], vec![1]]
        {
            let n: usize = dims.iter().product();
            let values: Vec<u32> = (0..n as u32).map(|v| v.wrapping_mul(2_654_435_761)).collect();
            let f = ArrayD::from_shape_vec(IxDyn(&dims).f(), values.clone()).unwrap();
            let expected: Vec<u32> = f.iter().copied().collect();
            assert_eq!(column_to_row_major(&values, &dims), expected, "{dims:?}");
            // Row-major data of `dims` to column-major: the same function with the extents reversed.
            let c = ArrayD::from_shape_vec(IxDyn(&dims), values.clone()).unwrap();
            let expected: Vec<u32> = c.t().iter().copied().collect();
            let reversed: Vec<usize> = dims.iter().rev().copied().collect();
            assert_eq!(column_to_row_major(&values, &reversed), expected, "{dims:?} back");
        }
    }
}

//! Lee, Kashyap and Chu's 3-D thinning (1994) as scikit-image 0.26 runs it (`_skeletonize_lee_cy.pyx`, after
//! Arganda-Carreras' Skeletonize3D), on the host: for each of the six border directions in turn, the candidates
//! (border points that are not end points, keep the Euler characteristic and are simple) are collected from the
//! image as it stands — in parallel over the foreground points, kept in raster order — then rechecked one after another in
//! that order, each deleted when it is still simple in the image the deletions before it left. The recheck is
//! sequential by design (a deletion changes whether the next candidate is simple), which is why it runs on the host.
//!
//! The image is a 0/1 volume padded by one zero on every side, in C order `[p, r, c]`.

use rayon::prelude::*;

/// The border directions in the order scikit-image (and ImageJ) visits them, as the neighbour that must be
/// background: `(dp, dr, dc)`. skimage's codes 4 (W, r − 1), 3 (E, r + 1), 2 (S, c + 1), 1 (N, c − 1), 5 (U, p + 1),
/// 6 (B, p − 1); a single plane visits only the first four.
const BORDERS: [[isize; 3]; 6] = [[0, -1, 0], [0, 1, 0], [0, 0, 1], [0, 0, -1], [1, 0, 0], [-1, 0, 0]];

/// The centre's place in the 27-neighbourhood.
const CENTRE: usize = 13;

/// Lee et al.'s Table 2, column δG26: the change of the Euler characteristic of an octant's configuration, for the
/// configurations that hold the centre (the odd indices; the even ones are 0).
const EULER_ODD: [i8; 128] = [
    1, -1, -1, 1, -3, -1, -1, 1, -1, 1, 1, -1, 3, 1, 1, -1, -3, -1, 3, 1, 1, -1, 3, 1, -1, 1, 1, -1, 3, 1, 1, -1, -3,
    3, -1, 1, 1, 3, -1, 1, -1, 1, 1, -1, 3, 1, 1, -1, 1, 3, 3, 1, 5, 3, 3, 1, -1, 1, 1, -1, 3, 1, 1, -1, -7, -1, -1, 1,
    -3, -1, -1, 1, -1, 1, 1, -1, 3, 1, 1, -1, -3, -1, 3, 1, 1, -1, 3, 1, -1, 1, 1, -1, 3, 1, 1, -1, -3, 3, -1, 1, 1, 3,
    -1, 1, -1, 1, 1, -1, 3, 1, 1, -1, 1, 3, 3, 1, 5, 3, 3, 1, -1, 1, 1, -1, 3, 1, 1, -1,
];

/// The seven neighbours of each octant (NEB, NWB, SEB, SWB, NEU, NWU, SEU, SWU) in the order that gives their bits
/// in the index into [`EULER_ODD`] (the first the highest bit, 2^7; the centre is bit 0).
const OCTANTS: [[usize; 7]; 8] = [
    [2, 1, 11, 10, 5, 4, 14],
    [0, 9, 3, 12, 1, 10, 4],
    [8, 7, 17, 16, 5, 4, 14],
    [6, 15, 7, 16, 3, 12, 4],
    [20, 23, 19, 22, 11, 14, 10],
    [18, 21, 9, 12, 19, 22, 10],
    [26, 23, 17, 14, 25, 22, 16],
    [24, 25, 15, 16, 21, 22, 12],
];

/// The neighbourhood's offsets `(dp, dr, dc)` by place: place = 9·(dp + 1) + 3·(dc + 1) + (dr + 1) (the row offset
/// varies fastest: scikit-image's numbering).
const fn place_offset(place: usize) -> [isize; 3] {
    [(place / 9) as isize - 1, (place % 3) as isize - 1, ((place / 3) % 3) as isize - 1]
}

/// The other places 26-adjacent to `place`, as a bit mask (the centre left out): two points of the neighbourhood are
/// 26-adjacent exactly when they share one of its octants, which is the adjacency scikit-image's octree labelling
/// follows.
fn adjacent_to(place: usize) -> u32 {
    let here = place_offset(place);
    (0..27)
        .filter(|&other| other != place && other != CENTRE && place != CENTRE)
        .filter(|&other| here.iter().zip(place_offset(other)).all(|(a, b)| (a - b).abs() <= 1))
        .fold(0, |mask, other| mask | 1 << other)
}

/// [`adjacent_to`] of every place.
fn adjacency() -> [u32; 27] {
    std::array::from_fn(adjacent_to)
}

/// A padded 0/1 volume and its strides.
pub(super) struct Volume<'a> {
    voxels: &'a mut [u8],
    /// The foreground points, in raster order (the only points a border pass looks at).
    foreground: Vec<usize>,
    /// Extents `[p, r, c]`, the padding included.
    dims: [usize; 3],
    /// The linear offsets of the 27 places.
    places: [isize; 27],
    /// [`adjacency`].
    adjacent: [u32; 27],
}

impl<'a> Volume<'a> {
    /// The volume `voxels` of extents `dims` (padding included), or `None` when they disagree.
    pub(super) fn new(voxels: &'a mut [u8], dims: [usize; 3]) -> Option<Volume<'a>> {
        if dims.iter().product::<usize>() != voxels.len() {
            return None;
        }
        let mut places = [0isize; 27];
        for (place, slot) in places.iter_mut().enumerate() {
            *slot = linear(place_offset(place), dims);
        }
        let foreground = interior(dims).filter(|&at| voxels.get(at) == Some(&1)).collect();
        Some(Volume { voxels, foreground, dims, places, adjacent: adjacency() })
    }

    /// Thins the volume until a round over every border direction deletes nothing.
    pub(super) fn thin(&mut self) {
        let borders = if self.dims[0] == 3 { 4 } else { 6 };
        let mut unchanged = 0;
        while unchanged < borders {
            unchanged = 0;
            for &border in BORDERS.iter().take(borders) {
                let candidates = self.candidates(linear(border, self.dims));
                if self.recheck(&candidates) {
                    let voxels: &[u8] = self.voxels;
                    self.foreground.retain(|&at| voxels.get(at) == Some(&1));
                } else {
                    unchanged += 1;
                }
            }
        }
    }

    /// The points deletable from the border whose background neighbour is at `border`, in raster order.
    fn candidates(&self, border: isize) -> Vec<usize> {
        let voxels: &[u8] = self.voxels;
        let (places, adjacent) = (&self.places, &self.adjacent);
        self.foreground
            .par_iter()
            .copied()
            .filter(|&at| {
                if voxels.get(at.wrapping_add_signed(border)) != Some(&0) {
                    return false;
                }
                let bits = neighbourhood(voxels, places, at);
                !is_end_point(bits) && is_euler_invariant(bits) && is_simple(bits, adjacent)
            })
            .collect()
    }

    /// Deletes each candidate still simple, in order; whether any was deleted.
    fn recheck(&mut self, candidates: &[usize]) -> bool {
        let mut changed = false;
        for &at in candidates {
            if is_simple(neighbourhood(self.voxels, &self.places, at), &self.adjacent)
                && let Some(voxel) = self.voxels.get_mut(at)
            {
                *voxel = 0;
                changed = true;
            }
        }
        changed
    }
}

/// The interior points (the padding left out) of a volume of extents `dims`, in raster order.
fn interior([np, nr, nc]: [usize; 3]) -> impl Iterator<Item = usize> {
    let inner = |n: usize| 1..n.saturating_sub(1);
    inner(np).flat_map(move |p| inner(nr).flat_map(move |r| inner(nc).map(move |c| (p * nr + r) * nc + c)))
}

/// The linear offset of `(dp, dr, dc)` in a C-order volume of extents `dims`.
fn linear(offset: [isize; 3], dims: [usize; 3]) -> isize {
    let [_, nr, nc] = dims;
    offset[0] * (nr * nc) as isize + offset[1] * nc as isize + offset[2]
}

/// The 27-neighbourhood of an interior point as bits by place (outside the slice: background; the padding keeps
/// interior points' neighbourhoods inside).
fn neighbourhood(voxels: &[u8], places: &[isize; 27], at: usize) -> u32 {
    places.iter().enumerate().fold(0, |bits, (place, &offset)| {
        let set = voxels.get(at.wrapping_add_signed(offset)) == Some(&1);
        bits | (u32::from(set) << place)
    })
}

/// An end point has exactly one neighbour in its 26-neighbourhood.
fn is_end_point(bits: u32) -> bool {
    bits.count_ones() == 2
}

/// Whether deleting the centre keeps the Euler characteristic: the octants' changes sum to zero.
fn is_euler_invariant(bits: u32) -> bool {
    let change: i32 = OCTANTS
        .iter()
        .map(|octant| {
            let index = octant
                .iter()
                .enumerate()
                .fold(1usize, |index, (j, &place)| if bits >> place & 1 == 1 { index | 1 << (7 - j) } else { index });
            // Every index is odd (the centre's bit is set), so index / 2 is its place in the odd entries.
            EULER_ODD.get(index / 2).copied().map_or(0, i32::from)
        })
        .sum();
    change == 0
}

/// Whether the centre is simple: the neighbours (the centre left out) form at most one 26-connected component.
fn is_simple(bits: u32, adjacent: &[u32; 27]) -> bool {
    let left = bits & !(1 << CENTRE);
    if left == 0 {
        return true;
    }
    // Grow the component of the lowest neighbour, one newly reached point at a time.
    let mut component = left & left.wrapping_neg();
    let mut frontier = component;
    while frontier != 0 {
        let place = frontier.trailing_zeros() as usize;
        frontier &= frontier - 1;
        let reached = adjacent.get(place).copied().unwrap_or(0) & left & !component;
        component |= reached;
        frontier |= reached;
    }
    component == left
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bits of the places listed.
    fn with(places: &[usize]) -> u32 {
        places.iter().fold(1 << CENTRE, |bits, &p| bits | 1 << p)
    }

    #[test]
    fn places_follow_scikit_images_numbering() {
        // neighborhood[2] = img[p-1, r+1, c-1], [16] = img[p, r, c+1], [22] = img[p+1, r, c].
        assert_eq!(place_offset(2), [-1, 1, -1]);
        assert_eq!(place_offset(16), [0, 0, 1]);
        assert_eq!(place_offset(22), [1, 0, 0]);
        assert_eq!(place_offset(CENTRE), [0, 0, 0]);
    }

    #[test]
    fn octants_hold_the_points_of_one_corner_cube() {
        for octant in OCTANTS {
            let signs: Vec<isize> = (0..3)
                .map(|axis| octant.iter().map(|&p| place_offset(p)[axis]).find(|&v| v != 0).unwrap_or(0))
                .collect();
            for &place in &octant {
                let offset = place_offset(place);
                assert!((0..3).all(|a| offset[a] == 0 || offset[a] == signs[a]), "{octant:?}");
            }
        }
    }

    #[test]
    fn simple_points_by_their_components() {
        // Two opposite face neighbours: two components, not simple; a line of three around a corner: one.
        let adjacent = adjacency();
        assert!(!is_simple(with(&[4, 22]), &adjacent));
        assert!(is_simple(with(&[4, 3, 12]), &adjacent));
        assert!(is_simple(with(&[]), &adjacent));
        // Corners (0 and 26) are not adjacent to each other.
        assert!(!is_simple(with(&[0, 26]), &adjacent));
        assert!(is_end_point(with(&[26])));
    }

    #[test]
    fn an_isolated_point_changes_the_euler_characteristic() {
        assert!(!is_euler_invariant(with(&[])));
        // The middle of a straight line: deleting it splits the line (+1 component): not invariant.
        assert!(!is_euler_invariant(with(&[4, 22])));
        // The end of a line of two: deleting it leaves one point: invariant.
        assert!(is_euler_invariant(with(&[22])));
    }
}

//! Where an array's voxels lie in the world: voxel spacing, the position of the first voxel and the direction of
//! each axis — what DICOM and NIfTI files carry beside their pixels, and what a viewer needs to overlay a result
//! on the scan it came from.
//!
//! One convention for every format (docs/formats.md, "Geometry"): world coordinates are **RAS+** (x grows
//! towards the patient's right, y anterior, z superior), as NIfTI and nibabel use them; DICOM's LPS+ positions are
//! converted on reading and writing by negating x and y.

use crate::error::{Error, Result};

/// The unit of the spatial coordinates (NIfTI's `xyzt_units`, space part).
///
/// ```
/// use cliper::SpaceUnit;
/// assert_eq!(SpaceUnit::Micrometre.millimetres(), 0.001);
/// assert_eq!(SpaceUnit::default().name(), "mm");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SpaceUnit {
    /// The file did not say (NIfTI code 0); taken as millimetres for `gaussian:…mm`.
    Unknown,
    /// Metres (NIfTI 1).
    Metre,
    /// Millimetres (NIfTI 2, DICOM's only unit).
    #[default]
    Millimetre,
    /// Micrometres (NIfTI 3).
    Micrometre,
}

impl SpaceUnit {
    /// How many millimetres one unit is (1 for `Unknown`, which most tools read as millimetres).
    pub fn millimetres(self) -> f64 {
        match self {
            SpaceUnit::Metre => 1000.0,
            SpaceUnit::Millimetre | SpaceUnit::Unknown => 1.0,
            SpaceUnit::Micrometre => 0.001,
        }
    }

    /// The short name (`mm`, `m`, `um`, `unknown`).
    pub fn name(self) -> &'static str {
        match self {
            SpaceUnit::Unknown => "unknown",
            SpaceUnit::Metre => "m",
            SpaceUnit::Millimetre => "mm",
            SpaceUnit::Micrometre => "um",
        }
    }
}

/// Where the voxels of an array lie in the world, for its three **spatial axes in array order**: slice, row,
/// column — axes −3, −2, −1 of a grey array (a colour array's channel axis −3 is skipped, so its spatial axes are
/// −4, −2, −1; see [`Geometry::spatial_axes`]). A 2-D array has one slice: its geometry's slice axis has extent 1.
///
/// World coordinates are **RAS+** — x grows towards the patient's **R**ight, y **A**nterior, z **S**uperior — in
/// [`SpaceUnit`]s, as NIfTI and nibabel use them. DICOM's LPS+ coordinates are converted by negating x and y, as
/// dcm2niix and nibabel do.
///
/// [`Geometry::affine`] is nibabel's `img.affine`: it maps voxel indices `(i, j, k)` — `i` along the **last**
/// array axis (columns, NIfTI's fastest), `j` along rows, `k` along slices — to world coordinates. cliper loads a
/// NIfTI volume of nibabel shape `(X, Y, Z)` as an array `[Z, Y, X]` (the file's bytes as they lie, the last axis
/// fastest), so that a DICOM series `[slices, rows, columns]` and the NIfTI dcm2niix makes of it load alike.
///
/// ```
/// use cliper::Geometry;
/// let g = Geometry::from_spacing([3.0, 0.5, 0.5]); // 3 mm slices of 0.5 mm pixels
/// assert_eq!(g.affine()[0][0], 0.5); // i (columns) along x
/// assert_eq!(g.affine()[2][2], 3.0); // k (slices) along z
/// assert_eq!(g.position([1.0, 2.0, 4.0]), [2.0, 1.0, 3.0]);
/// let padded = g.shifted([0.0, -8.0, -8.0]); // 8 voxels of padding before rows and columns
/// assert_eq!(padded.origin, [-4.0, -4.0, 0.0]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Geometry {
    /// Distance between neighbouring voxels along each spatial axis (slice, row, column), in `units`; positive.
    pub spacing: [f64; 3],
    /// World position of the centre of the first voxel (index 0 on every spatial axis).
    pub origin: [f64; 3],
    /// Unit world vectors along which each spatial axis's index grows (slice, row, column).
    pub direction: [[f64; 3]; 3],
    /// The unit of `spacing` and `origin`.
    pub units: SpaceUnit,
    /// Time between volumes along the axis before the spatial ones (NIfTI's `pixdim[4]`, seconds), when known.
    pub time_step: Option<f64>,
    /// NIfTI's qform_code and sform_code — which space the affine maps into (1 scanner, 2 aligned, 3 Talairach,
    /// 4 MNI, 5 template) — when a NIfTI file gave others than 1 and 1: a NIfTI written with this geometry
    /// takes them back. `None` writes 1 and 1 (scanner), as dcm2niix does.
    pub nifti_codes: Option<[i16; 2]>,
}

impl Default for Geometry {
    /// Unit spacing at the origin, column → x, row → y, slice → z: what nibabel gives an image without an affine.
    fn default() -> Geometry {
        Geometry::from_spacing([1.0; 3])
    }
}

/// The axes of an array of `rank` that are spatial, slice first: the last three, skipping a colour image's
/// channel axis (−3). Fewer than three for arrays of rank < 3 (a 2-D image's slice axis is implicit).
fn spatial(rank: usize, colour: bool) -> Vec<usize> {
    let mut axes: Vec<usize> = (0..rank).rev().filter(|&a| !(colour && rank >= 3 && a == rank - 3)).take(3).collect();
    axes.reverse();
    axes
}

impl Geometry {
    /// `spacing` (slice, row, column) at the origin, axes along z, y and x.
    pub fn from_spacing(spacing: [f64; 3]) -> Geometry {
        Geometry {
            spacing,
            origin: [0.0; 3],
            direction: [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]],
            units: SpaceUnit::Millimetre,
            time_step: None,
            nifti_codes: None,
        }
    }

    /// The array axes (0-based) that the geometry's slice, row and column axes describe in an array of `rank`
    /// axes, slice first; a colour image's channel axis (−3) is skipped. Rank 2 gives the row and column axes
    /// only (one slice).
    ///
    /// ```
    /// use cliper::Geometry;
    /// assert_eq!(Geometry::spatial_axes(4, false), vec![1, 2, 3]); // [t, z, y, x]
    /// assert_eq!(Geometry::spatial_axes(4, true), vec![0, 2, 3]); // [frames, C, rows, columns]
    /// assert_eq!(Geometry::spatial_axes(2, false), vec![0, 1]);
    /// ```
    pub fn spatial_axes(rank: usize, colour: bool) -> Vec<usize> {
        spatial(rank, colour)
    }

    /// nibabel's 4×4 affine (row-major): world = A · (i, j, k, 1) with `i` the column index (last array axis),
    /// `j` the row, `k` the slice.
    pub fn affine(&self) -> [[f64; 4]; 4] {
        // Column c of the affine is the step of index c: i ↔ the column axis (2), j ↔ rows (1), k ↔ slices (0).
        let [d0, d1, d2] = self.direction;
        let [s0, s1, s2] = self.spacing;
        let row = |r: usize| {
            let at = |d: [f64; 3]| d.get(r).copied().unwrap_or(0.0);
            [at(d2) * s2, at(d1) * s1, at(d0) * s0, at(self.origin)]
        };
        [row(0), row(1), row(2), [0.0, 0.0, 0.0, 1.0]]
    }

    /// The geometry of nibabel's affine `a` (row-major; `a[3]` is ignored): spacings are the lengths of its first
    /// three columns, directions those columns normalised. A zero column (a degenerate affine) is an error.
    ///
    /// ```
    /// use cliper::Geometry;
    /// let g = Geometry::from_spacing([2.5, 0.8, 0.7]);
    /// let back = Geometry::from_affine(&g.affine())?;
    /// assert_eq!(back.spacing, [2.5, 0.8, 0.7]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn from_affine(a: &[[f64; 4]; 4]) -> Result<Geometry> {
        let [r0, r1, r2, _] = *a;
        let axis = |c: usize| -> Result<(f64, [f64; 3])> {
            let at = |r: [f64; 4]| r.get(c).copied().unwrap_or(0.0);
            let column = [at(r0), at(r1), at(r2)];
            let length = column.iter().map(|v| v * v).sum::<f64>().sqrt();
            if !(length > 0.0 && length.is_finite()) {
                return Err(Error::invalid(
                    "Geometry::from_affine",
                    format!("column {c} of the affine {a:?} is {column:?}: a voxel axis needs a non-zero, finite step"),
                ));
            }
            Ok((length, column.map(|v| v / length)))
        };
        let ((s2, d2), (s1, d1), (s0, d0)) = (axis(0)?, axis(1)?, axis(2)?);
        Ok(Geometry {
            spacing: [s0, s1, s2],
            origin: [r0[3], r1[3], r2[3]],
            direction: [d0, d1, d2],
            ..Geometry::default()
        })
    }

    /// The world position of the (possibly fractional) voxel index `index` (slice, row, column).
    pub fn position(&self, index: [f64; 3]) -> [f64; 3] {
        let mut p = self.origin;
        for ((n, spacing), direction) in index.iter().zip(self.spacing).zip(self.direction) {
            for (x, d) in p.iter_mut().zip(direction) {
                *x += n * spacing * d;
            }
        }
        p
    }

    /// The geometry of a result whose first voxel is the voxel `offset` (slice, row, column; fractional or
    /// negative) of this one: cropping by `n` voxels shifts by `n`, padding by `n` by `−n`, a valid convolution
    /// by the filter's centre.
    pub fn shifted(&self, offset: [f64; 3]) -> Geometry {
        Geometry { origin: self.position(offset), ..*self }
    }

    /// The geometry of a result whose spatial axes are this one's reordered: axis `a` of the result is axis
    /// `order[a]` of this (slice, row, column numbering).
    ///
    /// ```
    /// use cliper::Geometry;
    /// let g = Geometry::from_spacing([3.0, 1.0, 0.5]).permuted([0, 2, 1]); // each slice transposed
    /// assert_eq!(g.spacing, [3.0, 0.5, 1.0]);
    /// assert_eq!(g.direction[1], [1.0, 0.0, 0.0]); // rows now run along x
    /// ```
    pub fn permuted(&self, order: [usize; 3]) -> Geometry {
        let spacing = order.map(|from| self.spacing.get(from).copied().unwrap_or(1.0));
        let direction = order.map(|from| self.direction.get(from).copied().unwrap_or_default());
        Geometry { spacing, direction, ..*self }
    }

    /// The map from `reference`'s voxel grid into this one: `reference`'s voxel `o` (slice, row, column) lies where
    /// this geometry's fractional voxel `matrix · o + offset` does — nibabel's `inv(affine) @ reference.affine` in
    /// cliper's axis order, composed in f64 from both geometries (positions in millimetres, so that units may
    /// differ). An error when this geometry's axes span no volume (no inverse).
    ///
    /// ```
    /// use cliper::Geometry;
    /// let fine = Geometry::from_spacing([1.0, 0.5, 0.5]);
    /// let coarse = Geometry { origin: [1.0, 0.0, 2.0], ..Geometry::from_spacing([2.0, 1.0, 1.0]) };
    /// let (matrix, offset) = fine.voxels_from(&coarse)?;
    /// assert_eq!(matrix, [[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0]]);
    /// assert_eq!(offset, [2.0, 0.0, 2.0]); // coarse's first voxel: z = 2 mm (slice 2), x = 1 mm (column 2)
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn voxels_from(&self, reference: &Geometry) -> Result<([[f64; 3]; 3], [f64; 3])> {
        let inverse = inverse_columns(self.steps_mm()).ok_or_else(|| {
            Error::invalid(
                "Geometry::voxels_from",
                format!(
                    "the directions {:?} with spacing {:?} span no volume: no voxel lies at a given position",
                    self.direction, self.spacing
                ),
            )
        })?;
        let apply = |v: V3| inverse.map(|row| dot(row, v));
        // As nibabel's 4×4 product: the reference's steps and origin through the inverse, plus the inverse's own
        // translation.
        let matrix_columns = reference.steps_mm().map(apply);
        let matrix = [0, 1, 2].map(|r| matrix_columns.map(|c| c.get(r).copied().unwrap_or(0.0)));
        let millimetres = |g: &Geometry| g.origin.map(|x| x * g.units.millimetres());
        let (to, from) = (apply(millimetres(reference)), apply(millimetres(self)));
        Ok((matrix, [0, 1, 2].map(|a| to.get(a).copied().unwrap_or(0.0) - from.get(a).copied().unwrap_or(0.0))))
    }

    /// The world step of one voxel along each spatial axis (slice, row, column), in millimetres.
    fn steps_mm(&self) -> [V3; 3] {
        let unit = self.units.millimetres();
        [0, 1, 2].map(|s| {
            let (d, n) =
                (self.direction.get(s).copied().unwrap_or_default(), self.spacing.get(s).copied().unwrap_or(0.0));
            d.map(|x| x * n * unit)
        })
    }

    /// The spacing of the spatial axes in millimetres (slice, row, column).
    pub fn spacing_mm(&self) -> [f64; 3] {
        self.spacing.map(|s| s * self.units.millimetres())
    }

    /// A length in millimetres as a number of voxels along each spatial axis (slice, row, column): the sigmas of a
    /// Gaussian that smooths equally far in every direction on anisotropic voxels.
    ///
    /// ```
    /// use cliper::{Filter, Geometry};
    /// let ct = Geometry::from_spacing([2.5, 0.5, 0.5]);
    /// assert_eq!(ct.in_voxels(1.5), [0.6, 3.0, 3.0]);
    /// let smooth = Filter::<f32>::gaussian_axes(&ct.in_voxels(1.5))?; // 1.5 mm in every direction
    /// assert_eq!(smooth.shape(), &[5, 25, 25]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn in_voxels(&self, millimetres: f64) -> [f64; 3] {
        self.spacing_mm().map(|s| millimetres / s)
    }

    /// The axis codes of the directions, as nibabel's `aff2axcodes` gives them for (i, j, k): for each of the
    /// column, row and slice axes the world axis it runs closest to and the end it runs towards (`R`/`L`, `A`/`P`,
    /// `S`/`I`).
    ///
    /// ```
    /// assert_eq!(cliper::Geometry::default().axis_codes(), "RAS");
    /// ```
    pub fn axis_codes(&self) -> String {
        let names = [('R', 'L'), ('A', 'P'), ('S', 'I')];
        self.direction
            .iter()
            .rev()
            .map(|d| {
                let (world, value) = d
                    .iter()
                    .enumerate()
                    .fold((0, 0.0f64), |(w, v), (i, &x)| if x.abs() > v.abs() { (i, x) } else { (w, v) });
                let (plus, minus) = names.get(world).copied().unwrap_or(('?', '?'));
                if value >= 0.0 { plus } else { minus }
            })
            .collect()
    }
}

/// A vector of world coordinates (what the readers' and writers' geometry maths works on).
pub(crate) type V3 = [f64; 3];

pub(crate) fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub(crate) fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// The rows of the inverse of the matrix whose columns are `c` (each row dotted with a world vector gives that
/// vector's coordinate along one column), or `None` when the columns span no volume.
fn inverse_columns(c: [V3; 3]) -> Option<[V3; 3]> {
    let [c0, c1, c2] = c;
    let det = dot(c0, cross(c1, c2));
    let scale = dot(c0, c0).sqrt() * dot(c1, c1).sqrt() * dot(c2, c2).sqrt();
    if !(det.abs() > 1e-12 * scale && det.is_finite()) {
        return None;
    }
    Some([cross(c1, c2), cross(c2, c0), cross(c0, c1)].map(|row| row.map(|x| x / det)))
}

/// `a − b`.
pub(crate) fn difference(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// `a` over its length, or `None` for a (near-)zero or non-finite vector.
pub(crate) fn unit(a: V3) -> Option<V3> {
    let n = dot(a, a).sqrt();
    if n > 1e-6 && n.is_finite() { Some(a.map(|x| x / n)) } else { None }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: [f64; 3], b: [f64; 3]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
    }

    #[test]
    fn affine_round_trip_of_an_oblique_geometry() {
        let (c, s) = (0.3f64.cos(), 0.3f64.sin());
        let g = Geometry {
            spacing: [2.0, 0.9, 0.7],
            origin: [-100.0, 20.5, 3.0],
            direction: [[0.0, -s, c], [0.0, c, s], [-1.0, 0.0, 0.0]],
            ..Geometry::default()
        };
        let back = Geometry::from_affine(&g.affine()).unwrap();
        for a in 0..3 {
            assert!(close(back.direction[a], g.direction[a]));
            assert!((back.spacing[a] - g.spacing[a]).abs() < 1e-12);
        }
        assert_eq!(back.origin, g.origin);
        // The affine applied to (i, j, k) is the position of voxel (k, j, i).
        let a = g.affine();
        let (i, j, k) = (3.0, 5.0, 7.0);
        let world: Vec<f64> = (0..3).map(|r| a[r][0] * i + a[r][1] * j + a[r][2] * k + a[r][3]).collect();
        assert!(close([world[0], world[1], world[2]], g.position([k, j, i])));
        assert_eq!(g.axis_codes(), "LAS");
    }

    #[test]
    fn degenerate_affines_are_refused() {
        let mut a = Geometry::default().affine();
        a[0][1] = 0.0;
        a[1][1] = 0.0;
        let err = Geometry::from_affine(&a).unwrap_err().to_string();
        assert!(err.contains("column 1"), "{err}");
    }

    #[test]
    fn spatial_axes_skip_colour_channels() {
        assert_eq!(Geometry::spatial_axes(3, true), vec![1, 2]);
        assert_eq!(Geometry::spatial_axes(3, false), vec![0, 1, 2]);
        assert_eq!(Geometry::spatial_axes(1, false), vec![0]);
        assert_eq!(Geometry::spatial_axes(5, true), vec![1, 3, 4]);
    }
}

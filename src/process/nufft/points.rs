//! [`NufftPoints`]: the non-uniform sample positions of a NUFFT, checked.

use crate::error::{Error, Result};

/// Sample positions in k-space for an image of `shape` (1 to 3 axes): point `m`'s coordinate along image axis `d`
/// is `coords[m · d_count + d]`, in cycles per field of view (BART's unit: the grid's own frequencies are the
/// integers `−⌊N/2⌋ … N − 1 − ⌊N/2⌋`). The transform is periodic in each coordinate with period `N_d`; points
/// are accepted within ±1.5 `N_d` (as FINUFFT accepts [−3π, 3π)), farther ones are refused as a units mistake.
///
/// ```
/// use cliper::NufftPoints;
/// let p = NufftPoints::new(&[16, 12], vec![0.0, 0.5, -8.0, 5.75])?;
/// assert_eq!(p.len(), 2);
/// assert!(NufftPoints::new(&[16, 12], vec![0.0, f64::NAN]).is_err());
/// assert!(NufftPoints::new(&[16, 12], vec![30.0, 0.0]).is_err());
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct NufftPoints {
    shape: Vec<usize>,
    coords: Vec<f64>,
}

impl NufftPoints {
    /// The points `coords` (`[points, axes]`, row-major) for an image of `shape`.
    pub fn new(shape: &[usize], coords: Vec<f64>) -> Result<NufftPoints> {
        Self::named(shape, coords, "the trajectory")
    }

    /// As [`NufftPoints::new`], naming the source (a file) in refusals.
    pub fn named(shape: &[usize], coords: Vec<f64>, source: &str) -> Result<NufftPoints> {
        let op = "Nufft";
        if !(1..=3).contains(&shape.len()) || shape.contains(&0) {
            return Err(Error::invalid(op, format!("the image must have 1 to 3 axes of length ≥ 1; got {shape:?}")));
        }
        let axes = shape.len();
        if !coords.len().is_multiple_of(axes) {
            return Err(Error::invalid(
                op,
                format!("{source}: {} coordinates are not a whole number of {axes}-D points", coords.len()),
            ));
        }
        for (i, (&k, &n)) in coords.iter().zip(shape.iter().cycle()).enumerate() {
            let limit = 1.5 * n as f64;
            if !k.is_finite() || k.abs() > limit {
                return Err(Error::invalid(
                    op,
                    format!(
                        "{source}: point {} has coordinate {k} along axis {} (of {n}): a coordinate must be finite and \
                         within ±{limit} cycles per field of view",
                        i / axes,
                        i % axes
                    ),
                ));
            }
        }
        Ok(NufftPoints { shape: shape.to_vec(), coords })
    }

    /// The number of points.
    pub fn len(&self) -> usize {
        self.coords.len() / self.shape.len()
    }

    /// Whether there are no points.
    pub fn is_empty(&self) -> bool {
        self.coords.is_empty()
    }

    /// The image shape the points are for.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The coordinates, `[points, axes]` row-major.
    pub fn coords(&self) -> &[f64] {
        &self.coords
    }
}

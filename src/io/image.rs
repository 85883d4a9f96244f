//! [`Image`]: what an image file holds beside its samples — colour and geometry — the one type every reader
//! returns and `write_image` takes (in a file of its own so that the readers and the dispatch in `file.rs` both
//! import it without importing each other).

use super::geometry::Geometry;
use super::host_array::HostArray;
use super::rescale::Scaling;

/// An array read from a file, whether the file called it a colour image (its channel axis is the one before
/// the last two: `[C, H, W]`, `[pages, C, H, W]`), and where its voxels lie.
///
/// ```
/// let image = cliper::read_image(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/rgb_3x5.png"))?;
/// assert!(image.colour);
/// assert_eq!(image.array.shape(), &[3, 3, 5]); // red, green and blue planes of 3 rows × 5 columns
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Image {
    /// The samples, in the file's own type.
    pub array: HostArray,
    /// Whether axis −3 holds colour channels (grey + alpha, RGB or RGBA).
    pub colour: bool,
    /// Where the voxels lie in the world, for files that say (DICOM, NIfTI); `None` for plain arrays.
    pub geometry: Option<Geometry>,
    /// The rescale the file applied to its stored integers (NIfTI's scl_slope/scl_inter, DICOM's
    /// RescaleSlope/Intercept), when it had one; a NIfTI written from the image stores the integers again while
    /// the values are still theirs ([`Scaling::unscale`]). `None` for files without one.
    pub scaling: Option<Scaling>,
}

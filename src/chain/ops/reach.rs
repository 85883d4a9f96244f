//! How far an operation looks: the rows of context (the halo) a tile needs along the axis a chain is cut along,
//! and what a `pad` step adds there — or why the operation cannot run in tiles at all (`tiled.rs` runs them).
//! Each operation states its own reach ([`super::Operation::reach`]); the helpers here are the rules they share.

use crate::Border;
use crate::chain::any_data::FileSpec;
use crate::error::{Error, Result};

/// What one step does along the tiled axis: it reads up to `halo` elements beyond each output on both sides, and
/// (for `pad`) adds `pad.0` elements before and `pad.1` after.
///
/// Halos are upper bounds: the largest extent of the step's window on any axis, so that ranks, footprints,
/// origins and colour handling can never make a tile's context too short (a larger halo only costs rows that are
/// computed twice).
///
/// ```
/// use cliper::chain::{Op, Reach};
/// let median: Op = toml::from_str("op = \"rank-filter\"\nfilter = \"median\"\nsize = 5")?;
/// assert_eq!(median.reach(&[100, 80], 0)?, Reach { halo: 5, pad: (0, 0) });
/// let pad: Op = toml::from_str("op = \"pad\"\nwidth = \"3:1,0:0\"\nmode = \"reflect\"")?;
/// assert_eq!(pad.reach(&[100, 80], 0)?, Reach { halo: 0, pad: (3, 1) });
/// let label: Op = toml::from_str("op = \"label\"")?;
/// assert!(label.reach(&[100, 80], 0).unwrap_err().to_string().contains("whole image"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reach {
    /// Elements of context needed on each side of a tile.
    pub halo: usize,
    /// Elements a pad step adds before and after.
    pub pad: (usize, usize),
}

impl Reach {
    /// A step that reads `halo` elements beyond each output and adds none.
    pub fn halo(halo: usize) -> Result<Reach> {
        Ok(Reach { halo, pad: (0, 0) })
    }
}

/// The refusal of operation `name` to run in tiles of an input of `shape`: it needs the whole image, `why`.
pub(super) fn whole(name: &str, shape: &[usize], why: &str) -> Error {
    Error::invalid(
        "tiles",
        format!(
            "`{name}` {why}, so it needs the whole image at once; it cannot run in tiles (the input {shape:?} does \
             not fit the device memory budget: raise CLIPER_MEMORY_LIMIT or use a device with more memory)"
        ),
    )
}

/// A `wrap` border reads the opposite edge of the image, which a tile does not hold.
pub(super) fn no_wrap(name: &str, shape: &[usize], border: Border) -> Result<()> {
    match border {
        Border::Wrap => Err(whole(name, shape, "with a wrap border reads the opposite edge of the image")),
        _ => Ok(()),
    }
}

/// The extent of a window of `sizes`, of the arrays in `files` (footprints, structures) and shifted by `origin`.
pub(super) fn window_extent(sizes: &[usize], files: &[&Option<String>], origin: &Option<Vec<isize>>) -> Result<usize> {
    let mut extent = sizes.iter().copied().max().unwrap_or(1);
    for file in files.iter().filter_map(|f| f.as_ref()) {
        extent = extent.max(file_shape(file)?.into_iter().max().unwrap_or(1));
    }
    let shift = origin.iter().flatten().map(|o| o.unsigned_abs()).max().unwrap_or(0);
    Ok(extent + shift)
}

/// The shape of the array in a filter, footprint or structure file.
pub(super) fn file_shape(file: &str) -> Result<Vec<usize>> {
    Ok(FileSpec::parse(file).read()?.array.shape().to_vec())
}

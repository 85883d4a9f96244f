//! How far each [`Op`] looks: the rows of context (the halo) a tile needs along the axis a chain is cut along,
//! and what a `pad` step adds there — or why the operation cannot run in tiles at all (`tiled.rs` runs them).

use super::any_data::FileSpec;
use super::ops::{Op, spanned};
use crate::error::{Error, Result};
use crate::{Border, ConvOutput, Derivative, Filter};

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

impl Op {
    /// How far this operation looks along `axis` of data of `shape` when it runs on tiles cut along that axis,
    /// or an error naming the operation and why it cannot (it needs the whole image: labels, distances,
    /// resampling, transforms and products; a wrap border, which reads the opposite edge; a sum over everything).
    /// Sigmas in millimetres must have been turned into voxels first ([`Op::in_voxels`]).
    pub fn reach(&self, shape: &[usize], axis: usize) -> Result<Reach> {
        let name = self.name();
        let whole = |why: &str| {
            Error::invalid(
                "tiles",
                format!(
                    "`{name}` {why}, so it needs the whole image at once; it cannot run in tiles (the input \
                     {shape:?} does not fit the device memory budget: raise CLIPER_MEMORY_LIMIT or use a device \
                     with more memory)"
                ),
            )
        };
        let no_wrap = |border: &str| -> Result<()> {
            match Border::scipy(border).or_else(|_| Border::numpy(border)) {
                Ok(Border::Wrap) => Err(whole("with a wrap border reads the opposite edge of the image")),
                _ => Ok(()),
            }
        };
        let window = |sizes: &[usize], files: &[&Option<String>], origin: &Option<Vec<isize>>| -> Result<usize> {
            let mut extent = sizes.iter().copied().max().unwrap_or(1);
            for file in files.iter().filter_map(|f| f.as_ref()) {
                extent = extent.max(file_shape(file)?.into_iter().max().unwrap_or(1));
            }
            let shift = origin.iter().flatten().map(|o| o.unsigned_abs()).max().unwrap_or(0);
            Ok(extent + shift)
        };
        let halo = |halo: usize| Ok(Reach { halo, pad: (0, 0) });
        match self {
            Op::Expression { .. } | Op::Window { .. } | Op::Threshold { .. } | Op::Clip { .. } => halo(0),
            Op::Pad { width, mode, .. } => {
                let pair = match width.0.as_slice() {
                    [one] => *one,
                    many => many.get(axis).copied().ok_or_else(|| {
                        Error::invalid(
                            "pad",
                            format!("{} width pairs for data of shape {shape:?}; give one per axis", many.len()),
                        )
                    })?,
                };
                if pair != (0, 0) {
                    no_wrap(mode)?;
                }
                Ok(Reach { halo: 0, pad: pair })
            }
            Op::Convolve { kernel, border, output, rank, .. } => {
                if *output != ConvOutput::Same {
                    return Err(whole("with an output other than `same` changes the image's size"));
                }
                no_wrap(border)?;
                let rank = spanned(name, *rank, shape)?;
                let file = FileSpec::parse(kernel);
                let extent = if file.path.exists() {
                    file_shape(kernel)?.into_iter().max().unwrap_or(1)
                } else {
                    Filter::<f64>::named(kernel, rank)?.shape().iter().copied().max().unwrap_or(1)
                };
                halo(extent)
            }
            Op::GradientMagnitude { derivative, border, rank, .. } => {
                no_wrap(border)?;
                let extent = match derivative.parse::<Derivative>()? {
                    Derivative::Gaussian(sigmas) => {
                        let text: Vec<String> = sigmas.iter().map(f64::to_string).collect();
                        let rank = spanned(name, *rank, shape)?.max(sigmas.len());
                        let spec = format!("gaussian:{}", text.join(","));
                        Filter::<f64>::named(&spec, rank)?.shape().iter().copied().max().unwrap_or(1)
                    }
                    Derivative::Sobel | Derivative::Prewitt | Derivative::Scharr => 3,
                };
                halo(extent)
            }
            Op::RankFilter { size, footprint, border, origin, .. } => {
                no_wrap(border)?;
                halo(window(&size.0, &[footprint], origin)?)
            }
            Op::GreyMorphology { size, footprint, structure, border, origin, .. } => {
                no_wrap(border)?;
                // Openings and closings are two passes; gradients, Laplaces and top-hats one or two.
                halo(2 * window(&size.0, &[footprint, structure], origin)?)
            }
            Op::BinaryMorphology { iterations, structure, origin, .. } => {
                if *iterations == 0 {
                    return Err(whole("repeated until nothing changes (iterations = 0)"));
                }
                halo(2 * iterations * window(&[3], &[structure], origin)?)
            }
            Op::Label { .. } => Err(whole("labels connected regions across the whole image")),
            Op::FillHoles { .. } => Err(whole("fills regions that only the whole image shows are enclosed")),
            Op::DistanceTransform { .. } => Err(whole("measures distances across the whole image")),
            Op::SplineFilter { .. } => Err(whole("is a recursive filter along whole lines")),
            Op::Zoom { .. } | Op::Shift { .. } | Op::Rotate { .. } | Op::AffineTransform { .. } => {
                Err(whole("resamples with a spline prefilter along whole lines"))
            }
            Op::MapCoordinates { .. } => Err(whole("reads anywhere the coordinates point")),
            Op::Transpose { .. } | Op::Permute { .. } => Err(whole("moves elements across the image")),
            Op::Matmul { .. } | Op::Power { .. } => Err(whole("is a matrix product")),
            Op::Norm { .. } | Op::Dot { .. } => Err(whole("reduces the whole array to a number")),
        }
    }
}

/// The shape of the array in a filter, footprint or structure file.
fn file_shape(file: &str) -> Result<Vec<usize>> {
    Ok(FileSpec::parse(file).read()?.array.shape().to_vec())
}

//! Segmentation by flooding (the segment family): scikit-image's `watershed` and scipy.ndimage's
//! `watershed_ift`. Both need the whole image (a basin can span every tile) and give int32 labels.

use super::operation::{Inputs, Named, Operation, Planned, colour_refusal};
use super::rank::footprint_file;
use super::reach::{Reach, whole};
use crate::Result;
use crate::chain::any_data::{AnyData, FileSpec, Kind};
use crate::prelude::*;
use crate::{Connectivity, IftParams, Watershed, WatershedIft, WatershedParams};
use serde::Deserialize;

/// The rules `watershed` and `watershed-ift` share: a flood needs the whole image, refuses colour, and writes
/// int32 labels.
macro_rules! flood_rules {
    () => {
        fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
            Err(whole(Self::NAME, shape, "floods basins that can span the whole image"))
        }
        fn for_colour(&self, shape: &[usize]) -> Result<Self> {
            Err(colour_refusal(Self::NAME, shape, "a watershed"))
        }
        fn result_dtype(&self) -> Option<Dtype> {
            Some(Dtype::I32)
        }
    };
}

fn one() -> i64 {
    1
}

/// The image and markers inputs both operations read.
const IMAGE_AND_MARKERS: &[(&str, &str)] = &[
    ("IMAGE", "Image flooded, lowest values first (or directory/glob)"),
    ("MARKERS", "Markers: non-zero elements are labelled seeds (0: not a marker)"),
];

/// scikit-image's `segmentation.watershed`: the basins of IMAGE flooded from the labelled MARKERS (scikit-image's
/// exact queue order, so plateaus split as it splits them), int32 labels. A third input (a pipeline step's or
/// Python's) or `--mask` limits the flood to its non-zero elements.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'watershed'\ncompactness = 0.01\nwatershed_line = true")?;
/// assert_eq!(step.name(), "watershed");
/// assert!(step.takes(2) && step.takes(3) && !step.takes(1));
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Examples:\n  cliper watershed gradient.nii.gz markers.nii.gz out/labels.nii.gz --mask brain.nii.gz\n  cliper watershed distance.npy seeds.npy out/labels.npy --connectivity 2 --compactness 0.01 --watershed-line\n\nThe flood is sequential and runs on the host (one core)."
)]
#[serde(deny_unknown_fields)]
pub struct WatershedArgs {
    /// Neighbours: scipy's generate_binary_structure connectivity, 1 (faces) to the rank (the full box).
    #[arg(long, default_value_t = 1, allow_hyphen_values = true)]
    #[serde(default = "one")]
    pub connectivity: i64,
    /// A footprint file (non-zero = neighbour; scikit-image's connectivity array; overrides --connectivity).
    #[arg(long)]
    #[serde(default)]
    pub structure: Option<String>,
    /// The footprint's centre, one index per axis (default its middle).
    #[arg(long, value_delimiter = ',')]
    #[serde(default)]
    pub offset: Option<Vec<usize>>,
    /// A mask file: only its non-zero elements are flooded.
    #[arg(long)]
    #[serde(default)]
    pub mask: Option<String>,
    /// The compact watershed's weight of the distance to the marker (0: the plain watershed).
    #[arg(long, default_value_t = 0.0)]
    #[serde(default)]
    pub compactness: f64,
    /// Separate the basins by a line of label 0.
    #[arg(long)]
    #[serde(default)]
    pub watershed_line: bool,
    /// The markers are the image's local minima, labelled (scikit-image's markers=None); MARKERS' values are
    /// not read (only its shape must match).
    #[arg(long)]
    #[serde(default)]
    pub minima: bool,
}

impl Named for WatershedArgs {
    const NAME: &'static str = "watershed";
    const INPUTS: Inputs = Inputs { names: IMAGE_AND_MARKERS, variadic: false, optional: false, prints: false };
    fn check(&self) -> Result<()> {
        if !self.compactness.is_finite() {
            return Err(Error::invalid(Self::NAME, format!("compactness {} is not a finite number", self.compactness)));
        }
        Ok(())
    }
}

impl WatershedArgs {
    fn params(&self) -> Result<WatershedParams> {
        let connectivity = match &self.structure {
            Some(file) => Connectivity::Footprint(footprint_file(file)?),
            None => Connectivity::Steps(self.connectivity),
        };
        let mut params = WatershedParams::default()
            .connectivity(connectivity)
            .compactness(self.compactness)
            .watershed_line(self.watershed_line);
        if let Some(offset) = &self.offset {
            params = params.offset(offset);
        }
        Ok(params)
    }
}

impl Operation for WatershedArgs {
    fn takes(&self, count: usize) -> bool {
        count == 2 || (count == 3 && self.mask.is_none())
    }
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        match inputs {
            [AnyData::F32(x), AnyData::F32(m)] => watershed(x, m, None, self),
            [AnyData::F64(x), AnyData::F64(m)] => watershed(x, m, None, self),
            [AnyData::F32(x), AnyData::F32(m), AnyData::F32(k)] => watershed(x, m, Some(k), self),
            [AnyData::F64(x), AnyData::F64(m), AnyData::F64(k)] => watershed(x, m, Some(k), self),
            _ => Err(real_pair_refusal(Self::NAME, inputs)),
        }
    }
    flood_rules!();
    fn files(&self) -> Vec<(&'static str, &str)> {
        let mut files: Vec<(&'static str, &str)> = self.structure.iter().map(|f| ("structure", f.as_str())).collect();
        files.extend(self.mask.iter().map(|f| ("mask", f.as_str())));
        files
    }
}

/// The refusal of inputs that are not real arrays of one element type.
fn real_pair_refusal(op: &str, inputs: &[&AnyData]) -> Error {
    match inputs {
        [x, rest @ ..] => match rest.iter().find(|y| y.kind() != x.kind()) {
            Some(y) => Error::Type {
                op: op.into(),
                expected: x.kind().name(),
                got: y.kind().name(),
                note: Some("the image, markers and mask are read in one precision".into()),
            },
            None => Error::TypeRule { op: op.into(), rule: "real data".into(), got: x.kind().name() },
        },
        [] => Error::invalid(op, "takes an image and markers"),
    }
}

/// The `--mask` file as 0/1 (its non-zero elements) on the image's device.
fn mask_file<T: Kind + RealElement>(x: &XData<T>, file: &str) -> Result<XData<T>> {
    let spec = FileSpec::parse(file);
    let host = spec.read()?.array;
    if host.shape() != x.shape() {
        return Err(Error::shape_because(
            "watershed",
            x.shape(),
            host.shape(),
            format!("the mask {file} must have the image's shape"),
        ));
    }
    let on = |v: f64| T::from_c64(f64::from(u8::from(v != 0.0)).into());
    let values: Vec<T> = host.to_elements::<f64>(&spec.path)?.iter().map(|&v| on(v)).collect();
    XData::from_slice(x.app(), x.shape(), &values)
}

fn watershed<T: Kind + RealElement>(
    x: &XData<T>,
    markers: &XData<T>,
    mask: Option<&XData<T>>,
    args: &WatershedArgs,
) -> Result<Planned> {
    let params = args.params()?;
    let mask = match (mask, &args.mask) {
        (Some(m), _) => Some(m.clone()),
        (None, Some(file)) => Some(mask_file(x, file)?),
        (None, None) => None,
    };
    if markers.shape() != x.shape() {
        return Err(Error::shape_because(
            "watershed",
            x.shape(),
            markers.shape(),
            "the markers must have the image's shape",
        ));
    }
    let y = XData::<T>::zeros(x.app(), &Watershed::<T>::output_shape(x.shape(), &params)?)?;
    let seeds = (!args.minima).then_some(markers);
    Ok((Box::new(Watershed::new(x, seeds, mask.as_ref(), &y, params)), T::wrap(y)))
}

/// scipy.ndimage's `watershed_ift`: every element takes the label of the marker joined to it by the path whose
/// largest step in value is smallest (int32 labels; negative markers are background, flooded last on ties).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'watershed-ift'")?;
/// assert_eq!((step.name(), step.arity()), ("watershed-ift", 2));
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Example: cliper watershed-ift image_u8.png markers.npy out/labels.npy --structure cross.npy\n\nThe image must hold 8- or 16-bit unsigned values (0 to 65535), as scipy's. The transform runs on the host (one core)."
)]
#[serde(deny_unknown_fields)]
pub struct WatershedIftArgs {
    /// A 3×…×3 structure file (non-zero = neighbour; default the faces: generate_binary_structure(rank, 1)).
    #[arg(long)]
    #[serde(default)]
    pub structure: Option<String>,
}

impl Named for WatershedIftArgs {
    const NAME: &'static str = "watershed-ift";
    const ALIASES: &'static [&'static str] = &["watershed_ift"];
    const INPUTS: Inputs = Inputs {
        names: &[
            ("INPUT", "Image of 8- or 16-bit unsigned values (or directory/glob)"),
            ("MARKERS", "Markers: non-zero elements are labelled seeds (negative: background)"),
        ],
        variadic: false,
        optional: false,
        prints: false,
    };
}

impl Operation for WatershedIftArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let mut params = IftParams::default();
        if let Some(file) = &self.structure {
            params = params.structure(footprint_file(file)?);
        }
        match inputs {
            [AnyData::F32(x), AnyData::F32(m)] => ift(x, m, params),
            [AnyData::F64(x), AnyData::F64(m)] => ift(x, m, params),
            _ => Err(real_pair_refusal(Self::NAME, inputs)),
        }
    }
    flood_rules!();
    fn files(&self) -> Vec<(&'static str, &str)> {
        self.structure.iter().map(|f| ("structure", f.as_str())).collect()
    }
}

fn ift<T: Kind + RealElement>(x: &XData<T>, markers: &XData<T>, params: IftParams) -> Result<Planned> {
    let y = XData::<T>::zeros(x.app(), &WatershedIft::<T>::output_shape(x.shape(), &params)?)?;
    Ok((Box::new(WatershedIft::new(x, markers, &y, params)), T::wrap(y)))
}

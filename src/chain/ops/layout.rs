//! Rearrangements (the layout family and numpy.pad): `transpose`, `permute`, `slice`, `stack`, `reorient` and `pad`. Their results hold the
//! input's values rearranged, so they keep an integer result's type (labels stay int32).

use super::filter::spatial_offsets;
use super::operation::Inputs;
use super::operation::{Named, Operation, Planned, colour_refusal};
use super::params::{NumpyBorder, Widths};
use super::reach::Reach;
use super::reach::{no_wrap, whole};
use crate::Result;
use crate::chain::any_data::{AnyData, Kind, dispatch};
use crate::prelude::*;
use crate::process::layout::{Slice, SliceAxis, SliceEntry, SliceSpec, Stack};
use serde::Deserialize;

/// Transpose the last two axes (batched over the others).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'transpose'")?;
/// assert_eq!(step.name(), "transpose");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper transpose data/phantom_256.tif out/t.tif --conj")]
#[serde(deny_unknown_fields)]
pub struct TransposeArgs {
    /// Conjugate as well (Hermitian transpose) for complex data.
    #[arg(long)]
    #[serde(default)]
    pub conj: bool,
}

impl Named for TransposeArgs {
    const NAME: &'static str = "transpose";
}

impl Operation for TransposeArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        fn typed<T: Kind>(x: &XData<T>, conj: bool) -> Result<Planned> {
            let y = XData::<T>::zeros(x.app(), &Transpose::<T>::output_shape(x.shape())?)?;
            let p: Box<dyn Process> =
                if conj { Box::new(ConjugateTranspose::new(x, &y)) } else { Box::new(Transpose::new(x, &y)) };
            Ok((p, T::wrap(y)))
        }
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        dispatch!(x, x => typed(x, self.conj))
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "moves elements across the image"))
    }
    fn geometry(&self, geometry: &Geometry, input: &[usize], _output: &[usize], _colour: bool) -> Option<Geometry> {
        (input.len() >= 2).then(|| geometry.permuted([0, 2, 1]))
    }
    fn keeps_values(&self) -> bool {
        true
    }
}

/// Reorder the axes.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'permute'\naxes = [1, 0]")?;
/// assert_eq!(step.name(), "permute");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper permute data/phantom_64x64x64.tif out/sagittal.tif --axes 2,0,1")]
#[serde(deny_unknown_fields)]
pub struct PermuteArgs {
    /// The new order of the axes, comma-separated: axis k of the result is axis `axes[k]` of the input.
    #[arg(long, value_delimiter = ',', required = true)]
    pub axes: Vec<usize>,
}

impl Named for PermuteArgs {
    const NAME: &'static str = "permute";
}

impl Operation for PermuteArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        fn typed<T: Kind>(x: &XData<T>, axes: &[usize]) -> Result<Planned> {
            let y = XData::<T>::zeros(x.app(), &Permute::<T>::output_shape(x.shape(), axes)?)?;
            Ok((Box::new(Permute::new(x, &y, axes)), T::wrap(y)))
        }
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        dispatch!(x, x => typed(x, &self.axes))
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "moves elements across the image"))
    }
    fn geometry(&self, geometry: &Geometry, input: &[usize], _output: &[usize], colour: bool) -> Option<Geometry> {
        // A permutation that moves a spatial axis onto a non-spatial one loses the geometry.
        let spatial = Geometry::spatial_axes(input.len(), colour);
        let first = 3 - spatial.len().min(3);
        let mut order = [0, 1, 2];
        for (g, &to) in spatial.iter().enumerate() {
            let from = self.axes.get(to)?;
            let k = spatial.iter().position(|s| s == from)?;
            *order.get_mut(first + g)? = first + k;
        }
        Some(geometry.permuted(order))
    }
    fn keeps_values(&self) -> bool {
        true
    }
    fn planes_stay(&self) -> bool {
        let n = self.axes.len();
        n >= 3 && self.axes.get(n - 3) == Some(&(n - 3)) && self.axes.iter().skip(n - 2).all(|&a| a + 2 >= n)
    }
}

/// Pad an array (numpy.pad modes).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'pad'\nwidth = 2")?;
/// assert_eq!(step.name(), "pad");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper pad data/phantom_256.png out/padded.tif --width 16 --mode reflect")]
#[serde(deny_unknown_fields)]
pub struct PadArgs {
    /// N for every side of every axis, or BEFORE:AFTER per axis (4:4,2:6).
    #[arg(long, required = true)]
    pub width: Widths,
    /// numpy.pad mode: constant, edge, reflect, symmetric, wrap.
    #[arg(long, default_value = "constant")]
    #[serde(default)]
    pub mode: NumpyBorder,
    /// The constant for mode constant (negative values as they are: --value -1000).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    #[serde(default)]
    pub value: f64,
}

impl PadArgs {
    /// The border, with its constant where it is `constant`.
    fn border(&self) -> Border {
        match self.mode.0 {
            Border::Constant(_) => Border::Constant(self.value),
            other => other,
        }
    }

    /// The widths before and after `axis` of an array of `nd` axes (one pair stands for every axis).
    pub fn along(&self, axis: usize) -> Option<(usize, usize)> {
        if self.width.0.len() == 1 { self.width.0.first().copied() } else { self.width.0.get(axis).copied() }
    }
}

impl Named for PadArgs {
    const NAME: &'static str = "pad";
}

impl Operation for PadArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        fn typed<T: Kind>(x: &XData<T>, params: PadParams) -> Result<Planned> {
            let y = XData::<T>::zeros(x.app(), &Pad::<T>::output_shape(x.shape(), &params)?)?;
            Ok((Box::new(Pad::new(x, &y, params)), T::wrap(y)))
        }
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        let params = PadParams::new(&self.width.0).border(self.border());
        dispatch!(x, x => typed(x, params.clone()))
    }
    fn reach(&self, shape: &[usize], axis: usize) -> Result<Reach> {
        let pair = match self.width.0.as_slice() {
            [one] => *one,
            many => many.get(axis).copied().ok_or_else(|| {
                Error::invalid(
                    Self::NAME,
                    format!("{} width pairs for data of shape {shape:?}; give one per axis", many.len()),
                )
            })?,
        };
        if pair != (0, 0) {
            no_wrap(Self::NAME, shape, self.mode.0)?;
        }
        Ok(Reach { halo: 0, pad: pair })
    }
    fn for_colour(&self, shape: &[usize]) -> Result<Self> {
        let nd = shape.len();
        match self.width.0.as_slice() {
            [spatial] => {
                let mut widths = vec![(0, 0); nd.saturating_sub(2)];
                widths.extend([*spatial; 2]);
                Ok(PadArgs { width: Widths(widths), ..self.clone() })
            }
            many if nd >= 3 && many.get(nd - 3).is_some_and(|&w| w != (0, 0)) => {
                Err(colour_refusal(Self::NAME, shape, "this pad would widen the colour channels"))
            }
            _ => Ok(self.clone()),
        }
    }
    fn geometry(&self, geometry: &Geometry, input: &[usize], _output: &[usize], colour: bool) -> Option<Geometry> {
        // The origin moves back by the widths before.
        let before: Vec<f64> = (0..input.len()).map(|a| -(self.along(a).map_or(0, |w| w.0) as f64)).collect();
        Some(geometry.shifted(spatial_offsets(&before, input.len(), colour)))
    }
    fn keeps_values(&self) -> bool {
        true
    }
}

/// Take part of an array: numpy's basic indexing (x[10:50, :, ::2]).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'slice'\nslice = '10:50, :, ::-2'")?;
/// assert_eq!(step.name(), "slice");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Examples:\n  cliper slice data/phantom_64x64x64.tif out/part.tif --slice 10:50,:,::2\n  cliper slice data/phantom_64x64x64.tif out/plane.tif --slice 32\n  cliper slice data/phantom_256.tif out/flipped.tif --slice ::-1"
)]
#[serde(deny_unknown_fields)]
pub struct SliceArgs {
    /// numpy's index, comma-separated per axis: START:STOP:STEP (each optional; negative counts from the end, a
    /// negative step reads backwards), a bare integer (that index; the axis is dropped), `...` (the axes between);
    /// missing trailing entries take whole axes.
    #[arg(long, required = true, allow_hyphen_values = true)]
    #[serde(deserialize_with = "slice_from_text")]
    pub slice: SliceSpec,
}

/// A step's `slice` key: numpy's index as text (`"10:50, :, ::2"`).
fn slice_from_text<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<SliceSpec, D::Error> {
    String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
}

impl Named for SliceArgs {
    const NAME: &'static str = "slice";
}

impl Operation for SliceArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        fn typed<T: Kind>(x: &XData<T>, spec: &SliceSpec) -> Result<Planned> {
            let axes = spec.resolve(x.shape())?;
            let y = XData::<T>::zeros(x.app(), &SliceSpec::output_shape(&axes))?;
            Ok((Box::new(Slice::new(x, &y, &axes)), T::wrap(y)))
        }
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        dispatch!(x, x => typed(x, &self.slice))
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "moves elements across the image"))
    }
    fn geometry(&self, geometry: &Geometry, input: &[usize], _output: &[usize], colour: bool) -> Option<Geometry> {
        sliced_geometry(geometry, &self.slice.resolve(input).ok()?, colour)
    }
    fn keeps_values(&self) -> bool {
        true
    }
    fn planes_stay(&self) -> bool {
        self.slice.0.iter().all(|e| !matches!(e, SliceEntry::Index(_)))
    }
}

/// Where the voxels of a slice lie (docs/formats.md, "Geometry"). The origin moves to the first voxel read, the
/// spacing grows by each step's size and a negative step turns its axis's direction round; a step along the time
/// axis scales the time step. An integer index on a spatial axis keeps the geometry when the result's spatial axes
/// are still spatial axes of the input: the dropped axis takes the place of the result's implicit slice axis (a
/// plane cut from a volume keeps its position and orientation in the world, one voxel thick). Dropping the time
/// axis drops the time step; any other drop that would make a non-spatial axis spatial (a 4-D series losing a
/// spatial axis), and any drop from a colour image, leaves no geometry.
fn sliced_geometry(geometry: &Geometry, axes: &[SliceAxis], colour: bool) -> Option<Geometry> {
    let rank = axes.len();
    let spatial = Geometry::spatial_axes(rank, colour);
    let first = 3 - spatial.len().min(3);
    let mut offset = [0.0; 3];
    let mut moved = *geometry;
    for (k, &a) in spatial.iter().enumerate() {
        let (axis, slot) = (axes.get(a)?, first + k);
        *offset.get_mut(slot)? = axis.start as f64;
        *moved.spacing.get_mut(slot)? *= axis.step.unsigned_abs() as f64;
        if axis.step < 0 {
            let d = moved.direction.get_mut(slot)?;
            *d = d.map(|v| -v);
        }
    }
    moved.origin = geometry.position(offset);
    let time_axis = spatial.first().and_then(|s| s.checked_sub(1)).filter(|_| spatial.len() == 3);
    if let Some(t) = time_axis.and_then(|t| axes.get(t)) {
        moved.time_step = if t.kept { geometry.time_step.map(|s| s * t.step.unsigned_abs() as f64) } else { None };
    }
    if axes.iter().all(|a| a.kept) {
        return Some(moved);
    }
    if colour {
        return None;
    }
    // The result's spatial axes must come from the input's; the geometry's slots of the others (dropped, or
    // implicit in a 2-D input) go first, in order.
    let kept: Vec<usize> = (0..rank).filter(|&a| axes.get(a).is_some_and(|x| x.kept)).collect();
    let result_spatial = Geometry::spatial_axes(kept.len(), false);
    let mut kept_slots = Vec::new();
    for r in result_spatial {
        let from = kept.get(r)?;
        kept_slots.push(first + spatial.iter().position(|s| s == from)?);
    }
    let mut order: Vec<usize> = (0..3).filter(|s| !kept_slots.contains(s)).collect();
    order.extend(kept_slots);
    let order: [usize; 3] = order.try_into().ok()?;
    Some(moved.permuted(order))
}

/// Join arrays of one shape along a new axis (numpy.stack).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'stack'\naxis = 0")?;
/// assert_eq!(step.name(), "stack");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper stack t0.nii.gz t1.nii.gz t2.nii.gz out/series.nii.gz --axis 0")]
#[serde(deny_unknown_fields)]
pub struct StackArgs {
    /// The new axis's place in the result (numpy's axis; negative from the end of the result's axes).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    #[serde(default)]
    pub axis: isize,
}

impl StackArgs {
    /// The new axis in a result of `rank` axes.
    fn new_axis(&self, rank: usize) -> Result<usize> {
        let resolved = if self.axis < 0 { self.axis + rank as isize } else { self.axis };
        usize::try_from(resolved).ok().filter(|&a| a < rank).ok_or_else(|| {
            Error::invalid(Self::NAME, format!("axis {} is outside the {rank} axes of the stack", self.axis))
        })
    }
}

impl Named for StackArgs {
    const NAME: &'static str = "stack";
    const INPUTS: Inputs = Inputs {
        names: &[("FILES", "The arrays (one shape and type), then the output file")],
        variadic: true,
        optional: false,
        prints: false,
    };
}

impl Operation for StackArgs {
    fn arity(&self) -> usize {
        0
    }
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        fn typed<T: Kind>(xs: Vec<XData<T>>, axis: usize) -> Result<Planned> {
            let first = xs.first().ok_or_else(|| Error::invalid(StackArgs::NAME, "needs at least one array"))?;
            let shapes: Vec<&[usize]> = xs.iter().map(|x| x.shape()).collect();
            let y = XData::<T>::zeros(first.app(), &Stack::<T>::output_shape(&shapes, axis)?)?;
            Ok((Box::new(Stack::new(&xs, &y, axis)?), T::wrap(y)))
        }
        let first = inputs.first().ok_or_else(|| Error::invalid(Self::NAME, "needs at least one array"))?;
        if let Some((k, other)) = inputs.iter().enumerate().find(|(_, x)| x.kind() != first.kind()) {
            return Err(Error::Type {
                op: Self::NAME.into(),
                expected: first.kind().name(),
                got: other.kind().name(),
                note: Some(format!("input {k}: every input needs input 0's element type")),
            });
        }
        let axis = self.new_axis(first.shape().len() + 1)?;
        macro_rules! gather {
            ($variant:ident) => {
                typed(
                    inputs
                        .iter()
                        .filter_map(|x| if let AnyData::$variant(x) = x { Some(x.clone()) } else { None })
                        .collect(),
                    axis,
                )
            };
        }
        match first {
            AnyData::F32(_) => gather!(F32),
            AnyData::F64(_) => gather!(F64),
            AnyData::C32(_) => gather!(C32),
            AnyData::C64(_) => gather!(C64),
        }
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "joins whole arrays"))
    }
    fn geometry(&self, geometry: &Geometry, input: &[usize], _output: &[usize], colour: bool) -> Option<Geometry> {
        // The arrays' spatial axes stay the result's when the new axis comes before them (volumes into a series);
        // a new axis among or after them (planes into a volume) has no spacing to give it.
        let axis = self.new_axis(input.len() + 1).ok()?;
        let first_spatial = *Geometry::spatial_axes(input.len(), colour).first()?;
        // A colour image's channels leave axis −3 in the result, so no stack of them keeps one.
        (!colour && input.len() >= 3 && axis <= first_spatial).then_some(Geometry { time_step: None, ..*geometry })
    }
    fn keeps_values(&self) -> bool {
        true
    }
    fn planes_stay(&self) -> bool {
        false
    }
}

/// An orientation named by nibabel's axis codes (`axcodes`): for the voxel axes i, j, k in turn — the column, row
/// and slice axes, cliper's last array axis first — the world end it runs towards: `R` or `L` (x), `A` or `P` (y),
/// `S` or `I` (z), each world axis once. RAS is nibabel's closest canonical orientation, LPS DICOM's.
///
/// ```
/// use cliper::chain::AxisCodes;
/// let codes: AxisCodes = "PIR".parse()?;
/// assert_eq!(codes.to_string(), "PIR");
/// assert_eq!(codes.world(), [(1, true), (2, true), (0, false)]); // i towards −y, j towards −z, k towards +x
/// assert_eq!(AxisCodes::default(), AxisCodes::RAS);
/// let err = "LRS".parse::<AxisCodes>().unwrap_err().to_string();
/// assert!(err.contains("`LRS`"), "{err}"); // L and R name the same world axis
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxisCodes([char; 3]);

impl AxisCodes {
    /// Right, anterior, superior: nibabel's canonical orientation.
    pub const RAS: AxisCodes = AxisCodes(['R', 'A', 'S']);

    /// For the voxel axes i, j, k: the world axis (0 x, 1 y, 2 z) each runs along, and whether towards its
    /// negative end (`L`, `P`, `I`).
    pub fn world(&self) -> [(usize, bool); 3] {
        self.0.map(|letter| match letter {
            'L' => (0, true),
            'P' => (1, true),
            'I' => (2, true),
            'A' => (1, false),
            'S' => (2, false),
            _ => (0, false), // 'R': parsing admits nothing else
        })
    }
}

impl Default for AxisCodes {
    /// RAS, nibabel's closest canonical.
    fn default() -> AxisCodes {
        AxisCodes::RAS
    }
}

impl std::str::FromStr for AxisCodes {
    type Err = Error;
    fn from_str(text: &str) -> Result<AxisCodes> {
        let refusal = || {
            Error::invalid(
                ReorientArgs::NAME,
                format!(
                    "axis codes `{text}`: give three letters, one of each pair L/R, A/P, S/I, for the column, row and \
                     slice axes (RAS, LPS, PIR, …)"
                ),
            )
        };
        let letters: Vec<char> = text.chars().collect();
        let letters: [char; 3] = letters.try_into().map_err(|_| refusal())?;
        if letters.iter().any(|c| !"RLAPSI".contains(*c)) {
            return Err(refusal());
        }
        let codes = AxisCodes(letters);
        let mut worlds: Vec<usize> = codes.world().iter().map(|(w, _)| *w).collect();
        worlds.sort_unstable();
        if worlds != [0, 1, 2] {
            return Err(refusal());
        }
        Ok(codes)
    }
}

impl std::fmt::Display for AxisCodes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|c| write!(f, "{c}"))
    }
}

impl<'de> Deserialize<'de> for AxisCodes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<AxisCodes, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

/// How `reorient` rearranges the spatial axes (slice, row, column slots): result slot `s` is input slot `from[s]`,
/// read backwards where `flip[s]`.
///
/// ```
/// use cliper::Geometry;
/// use cliper::chain::{AxisCodes, Orientation};
/// // columns towards −x and rows towards −y (an LPS-like axial series), slices towards +z
/// let lps = Geometry::from_affine(&[
///     [-0.5, 0.0, 0.0, 0.0],
///     [0.0, -0.5, 0.0, 0.0],
///     [0.0, 0.0, 2.0, 0.0],
///     [0.0, 0.0, 0.0, 1.0],
/// ])?;
/// let o = Orientation::closest_canonical(&lps)?; // nibabel: as_closest_canonical flips i and j
/// assert_eq!(o, Orientation { from: [0, 1, 2], flip: [false, true, true] }); // slots: slice, row, column
/// let pir = Orientation::towards(&lps, "PIR".parse()?)?; // columns ← rows, rows ← slices flipped, slices ← columns flipped
/// assert_eq!(pir, Orientation { from: [2, 0, 1], flip: [true, true, false] });
/// assert_eq!(Orientation::towards(&lps, "LPS".parse::<AxisCodes>()?)?, Orientation { from: [0, 1, 2], flip: [false; 3] });
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Orientation {
    /// The input slot each result slot takes.
    pub from: [usize; 3],
    /// Whether that slot is read backwards.
    pub flip: [bool; 3],
}

impl Orientation {
    /// nibabel's `as_closest_canonical` on orthonormal directions: [`Orientation::towards`] RAS.
    pub fn closest_canonical(geometry: &Geometry) -> Result<Orientation> {
        Orientation::towards(geometry, AxisCodes::RAS)
    }

    /// nibabel's `as_reoriented(ornt_transform(io_orientation(affine), axcodes2ornt(codes)))` on orthonormal
    /// directions: each result axis (i, j, k: the column, row and slice slots) takes the input axis that runs along
    /// the world axis its code names, flipped where that input axis runs towards the other end.
    pub fn towards(geometry: &Geometry, codes: AxisCodes) -> Result<Orientation> {
        let current = io_orientation(geometry)?;
        let mut orientation = Orientation::default();
        for (m, (world, negative)) in codes.world().into_iter().enumerate() {
            // Both are permutations of the world axes, so the input axis is always found.
            let Some(n) = current.iter().position(|(w, _)| *w == world) else { continue };
            let flip = current.get(n).is_some_and(|(_, input_negative)| *input_negative != negative);
            // Voxel axis n (i, j, k) is slot 2 − n (slice, row, column numbering).
            if let (Some(from), Some(flipped)) = (orientation.from.get_mut(2 - m), orientation.flip.get_mut(2 - m)) {
                (*from, *flipped) = (2 - n, flip);
            }
        }
        Ok(orientation)
    }
}

/// nibabel's `io_orientation` on orthonormal directions: for the column, row and slice axes in turn (nibabel's i, j,
/// k), the world axis (0 x, 1 y, 2 z) its direction runs closest to among those not yet taken — the first of equal
/// ones, as numpy's argmax — and whether it runs towards that axis's negative end. Directions that are not
/// orthonormal (a sheared affine, where nibabel first takes the nearest rotation by an SVD) are refused.
fn io_orientation(geometry: &Geometry) -> Result<[(usize, bool); 3]> {
    let d = geometry.direction;
    let dot = |u: &[f64; 3], v: &[f64; 3]| u.iter().zip(v).map(|(a, b)| a * b).sum::<f64>();
    let orthonormal = d
        .iter()
        .enumerate()
        .all(|(a, u)| d.iter().enumerate().all(|(b, v)| (dot(u, v) - if a == b { 1.0 } else { 0.0 }).abs() <= 1e-6));
    if !orthonormal {
        return Err(Error::invalid(
            ReorientArgs::NAME,
            format!("the directions {d:?} are not orthonormal (a sheared affine): not supported"),
        ));
    }
    let mut taken = [false; 3];
    let mut axes = [(0, false); 3];
    for (axis, slot) in axes.iter_mut().zip([2, 1, 0]) {
        let column = d.get(slot).copied().unwrap_or_default();
        let (world, value) = column
            .iter()
            .zip(taken)
            .enumerate()
            .filter(|(_, (_, t))| !t)
            .map(|(w, (v, _))| (w, *v))
            .fold(None, |best: Option<(usize, f64)>, (w, v)| match best {
                Some((_, b)) if b.abs() >= v.abs() => best,
                _ => Some((w, v)),
            })
            .unwrap_or((0, 1.0));
        if let Some(t) = taken.get_mut(world) {
            *t = true;
        }
        *axis = (world, value < 0.0);
    }
    Ok(axes)
}

/// Reorder and flip the spatial axes to the orientation --to names (default RAS: nibabel's as_closest_canonical;
/// other codes its as_reoriented).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'reorient'\nto = 'LPS'")?;
/// assert_eq!(step.name(), "reorient");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Examples:\n  cliper reorient scan.nii.gz out/ras.nii.gz\n  cliper reorient scan.nii.gz out/lps.nii.gz --to LPS"
)]
#[serde(deny_unknown_fields)]
pub struct ReorientArgs {
    /// The orientation wanted: axis codes for the column, row and slice axes (nibabel's i, j, k), one letter of each
    /// of L/R, A/P, S/I (LPS, PIR, …).
    #[arg(long, default_value = "RAS")]
    #[serde(default)]
    pub to: AxisCodes,
    /// Resolved from the input's geometry before planning (not a parameter).
    #[arg(skip)]
    #[serde(skip)]
    pub orientation: Option<Orientation>,
}

impl Named for ReorientArgs {
    const NAME: &'static str = "reorient";
}

impl ReorientArgs {
    /// The slice reading the input's spatial axes (the last three) in the result's order and directions.
    fn reading(orientation: &Orientation, shape: &[usize]) -> Result<(Vec<usize>, Vec<SliceAxis>)> {
        let rank = shape.len();
        if rank < 3 {
            return Err(Error::invalid(Self::NAME, format!("needs a volume, not data of shape {shape:?}")));
        }
        let first = rank - 3;
        let mut order: Vec<usize> = (0..first).collect();
        order.extend(orientation.from.iter().map(|&slot| first + slot));
        let axes = order
            .iter()
            .enumerate()
            .map(|(k, &from)| {
                let n = shape.get(from).copied().unwrap_or(0);
                let flip = k >= first && orientation.flip.get(k - first).copied().unwrap_or(false);
                SliceAxis {
                    start: if flip { n.saturating_sub(1) } else { 0 },
                    count: n,
                    step: if flip { -1 } else { 1 },
                    kept: true,
                }
            })
            .collect();
        Ok((order, axes))
    }
}

impl Operation for ReorientArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        fn typed<T: Kind>(x: &XData<T>, orientation: &Orientation) -> Result<Planned> {
            let (order, axes) = ReorientArgs::reading(orientation, x.shape())?;
            let view = x.permuted_axes(&order)?;
            let y = XData::<T>::zeros(x.app(), &SliceSpec::output_shape(&axes))?;
            Ok((Box::new(Slice::new(&view, &y, &axes)), T::wrap(y)))
        }
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        let orientation = self.orientation.ok_or_else(|| {
            Error::invalid(
                Self::NAME,
                "needs the input's geometry (NIfTI, DICOM, NRRD, MetaImage); plain arrays have none",
            )
        })?;
        dispatch!(x, x => typed(x, &orientation))
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "moves elements across the image"))
    }
    fn for_colour(&self, shape: &[usize]) -> Result<Self> {
        Err(colour_refusal(Self::NAME, shape, "reorienting"))
    }
    fn in_voxels(&self, geometry: Option<&Geometry>, _shape: &[usize], _colour: bool) -> Result<Self> {
        let geometry = geometry.ok_or_else(|| {
            Error::invalid(
                Self::NAME,
                "needs the input's geometry (NIfTI, DICOM, NRRD, MetaImage); plain arrays have none",
            )
        })?;
        Ok(ReorientArgs { orientation: Some(Orientation::towards(geometry, self.to)?), ..self.clone() })
    }
    fn geometry(&self, geometry: &Geometry, input: &[usize], _output: &[usize], _colour: bool) -> Option<Geometry> {
        let orientation = Orientation::towards(geometry, self.to).ok()?;
        let first = input.len().checked_sub(3)?;
        // The first voxel read: the far end of each flipped input axis.
        let mut offset = [0.0; 3];
        let mut flipped = *geometry;
        for (&from, &flip) in orientation.from.iter().zip(&orientation.flip) {
            if flip {
                *offset.get_mut(from)? = input.get(first + from)?.saturating_sub(1) as f64;
                let d = flipped.direction.get_mut(from)?;
                *d = d.map(|v| -v);
            }
        }
        flipped.origin = geometry.position(offset);
        Some(flipped.permuted(orientation.from))
    }
    fn keeps_values(&self) -> bool {
        true
    }
}

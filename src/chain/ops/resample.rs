//! Resampling (the resample family): scipy.ndimage's zoom, shift, rotate, affine_transform, map_coordinates and
//! spline_filter, and nibabel's resample_from_to — their parameters, their rules for colour images (the two image axes, per channel) and for voxel
//! sizes in millimetres, where their results' voxels lie, and their processes. None runs in tiles: the spline
//! prefilter runs along whole lines.

use super::operation::{InputGrid, Inputs, Named, Operation, Planned, colour_refusal, resolve_axis};
use super::params::{InterpArgs, List, by_name, numbers, three, yes};
use super::reach::Reach;
use super::reach::whole;
use crate::Result;
use crate::chain::any_data::{AnyData, Kind, dispatch};
use crate::prelude::*;
use serde::Deserialize;

/// scipy.ndimage.zoom: spline interpolation onto a grid --zoom times as fine per axis, or onto voxels of
/// --spacing mm (the output's voxel size follows).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'zoom'\nzoom = '2'")?;
/// assert_eq!(step.name(), "zoom");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Examples:\n  cliper zoom ct.nii.gz out/ct_1mm.nii.gz --spacing 1          # isotropic 1 mm voxels\n  cliper zoom data/phantom_256.png out/phantom_512.png --zoom 2 --order 1\n  cliper zoom vol.npy out/vol.npy --zoom 1,2,2 --mode nearest"
)]
pub struct ZoomArgs {
    /// One factor, or one per axis (F or F,F,…); a colour image's channels stay as they are.
    #[arg(long)]
    #[serde(default)]
    pub zoom: Option<String>,
    /// The voxel size wanted in mm, one or one per spatial axis (needs a DICOM, NIfTI, NRRD or MetaImage
    /// input).
    #[arg(long)]
    #[serde(default)]
    pub spacing: Option<String>,
    /// scipy's grid_mode: the outer edges of the first and last voxels coincide, not their centres.
    #[arg(long)]
    #[serde(default)]
    pub grid_mode: bool,
    /// The spline interpolation.
    #[command(flatten)]
    #[serde(flatten)]
    pub interp: InterpArgs,
}

impl Named for ZoomArgs {
    const NAME: &'static str = "zoom";
}

impl Operation for ZoomArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let Some(zoom) = &self.zoom else {
            return Err(Error::invalid(
                Self::NAME,
                if self.spacing.is_some() {
                    "`spacing` in mm needs the input's voxel size (DICOM, NIfTI, NRRD, MetaImage); give zoom factors \
                     instead"
                } else {
                    "give `zoom` (factors) or `spacing` (mm)"
                },
            ));
        };
        let mut p = ResampleParams::zoom(&numbers(Self::NAME, "zoom", zoom)?).grid_mode(self.grid_mode);
        p.interpolation = self.interp.interpolation(Self::NAME)?;
        resample(inputs, p)
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "resamples with a spline prefilter along whole lines"))
    }
    fn for_colour(&self, shape: &[usize]) -> Result<Self> {
        let mut op = self.clone();
        if let Some(zoom) = &mut op.zoom {
            *zoom = colour_values(Self::NAME, "zoom", zoom, 1.0, shape)?;
        }
        Ok(op)
    }
    fn in_voxels(&self, geometry: Option<&Geometry>, shape: &[usize], colour: bool) -> Result<Self> {
        let Some(spacing) = &self.spacing else { return Ok(self.clone()) };
        let factors = zoom_for_spacing(self, spacing, geometry, shape, colour)?;
        Ok(ZoomArgs { zoom: Some(factors), spacing: None, ..self.clone() })
    }
    fn geometry(&self, geometry: &Geometry, input: &[usize], output: &[usize], colour: bool) -> Option<Geometry> {
        // The spacing scales by the step between samples; in grid mode the origin moves by the change of half a
        // voxel.
        let spatial = Geometry::spatial_axes(input.len(), colour);
        let first = 3 - spatial.len().min(3);
        let mut g = *geometry;
        let mut by = [0.0; 3];
        for (k, &axis) in spatial.iter().enumerate() {
            let (n, m) = (*input.get(axis)? as f64, *output.get(axis)? as f64);
            let step = if self.grid_mode {
                n / m
            } else if m > 1.0 {
                (n - 1.0) / (m - 1.0)
            } else {
                1.0
            };
            if self.grid_mode {
                *by.get_mut(first + k)? = (step - 1.0) / 2.0;
            }
            *g.spacing.get_mut(first + k)? *= step;
        }
        let origin = geometry.shifted(by).origin;
        Some(Geometry { origin, ..g })
    }
    fn overshoots(&self) -> bool {
        true
    }
}

/// A zoom given as a voxel size in mm turned into factors: per spatial axis, the sample count that covers the
/// input's extent at that voxel size, over the input's count.
fn zoom_for_spacing(
    zoom: &ZoomArgs,
    spacing: &str,
    geometry: Option<&Geometry>,
    shape: &[usize],
    colour: bool,
) -> Result<String> {
    let name = ZoomArgs::NAME;
    if zoom.zoom.is_some() {
        return Err(Error::invalid(name, "give `zoom` (factors) or `spacing` (mm), not both"));
    }
    let Some(g) = geometry else {
        return Err(Error::invalid(
            name,
            "`spacing` in mm needs the input's voxel size, which only DICOM, NIfTI, NRRD and MetaImage inputs carry; \
             give zoom factors instead",
        ));
    };
    let wanted = numbers(name, "spacing", spacing)?;
    if let Some(bad) = wanted.iter().find(|v| **v <= 0.0) {
        return Err(Error::invalid(name, format!("a voxel size must be positive, got {bad}")));
    }
    let spatial = Geometry::spatial_axes(shape.len(), colour);
    let first = 3 - spatial.len().min(3);
    let have = g.spacing_mm();
    let mut factors = vec![1.0; shape.len()];
    for (k, &axis) in spatial.iter().enumerate() {
        let want = match wanted.as_slice() {
            [one] => *one,
            many if many.len() == spatial.len() => many.get(k).copied().unwrap_or(1.0),
            many => {
                return Err(Error::invalid(
                    name,
                    format!(
                        "{} voxel sizes for the {} spatial axes of an array of shape {shape:?}: give one, or one per \
                         spatial axis",
                        many.len(),
                        spatial.len()
                    ),
                ));
            }
        };
        // The count of samples that spans the same extent at the voxel size wanted: the first and last centres
        // stay (scipy's zoom), or in grid mode the outer edges; the factor is that count over the input's, so
        // the spacing comes out as asked whenever the extent is a whole number of voxels of it.
        let n = shape.get(axis).copied().unwrap_or(1);
        let extent = have.get(first + k).copied().unwrap_or(1.0) / want;
        let m = if zoom.grid_mode {
            (n as f64 * extent).round().max(1.0)
        } else {
            ((n.saturating_sub(1)) as f64 * extent).round() + 1.0
        };
        if let Some(f) = factors.get_mut(axis) {
            *f = m / n.max(1) as f64;
        }
    }
    Ok(factors.iter().map(f64::to_string).collect::<Vec<_>>().join(","))
}

/// scipy.ndimage.shift: move the content by --shift samples (one, or one per axis), interpolated.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'shift'\nshift = '1.5'")?;
/// assert_eq!(step.name(), "shift");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper shift data/phantom_256.png out/shifted.png --shift 10.5,-3.25 --mode nearest")]
pub struct ShiftArgs {
    /// One shift, or one per axis, in samples.
    #[arg(long, allow_hyphen_values = true)]
    pub shift: String,
    /// The spline interpolation.
    #[command(flatten)]
    #[serde(flatten)]
    pub interp: InterpArgs,
}

impl Named for ShiftArgs {
    const NAME: &'static str = "shift";
}

impl Operation for ShiftArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let mut p = ResampleParams::shift(&numbers(Self::NAME, "shift", &self.shift)?);
        p.interpolation = self.interp.interpolation(Self::NAME)?;
        resample(inputs, p)
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "resamples with a spline prefilter along whole lines"))
    }
    fn for_colour(&self, shape: &[usize]) -> Result<Self> {
        Ok(ShiftArgs { shift: colour_values(Self::NAME, "shift", &self.shift, 0.0, shape)?, ..self.clone() })
    }
    fn overshoots(&self) -> bool {
        true
    }
}

/// scipy.ndimage.rotate: by --angle degrees counter-clockwise about the centre, in the plane of --axes.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'rotate'\nangle = 30")?;
/// assert_eq!(step.name(), "rotate");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Examples:\n  cliper rotate data/phantom_256.png out/rotated.png --angle 30\n  cliper rotate vol.nii.gz out/tilted.nii.gz --angle 12 --axes 0,2 --no-reshape"
)]
pub struct RotateArgs {
    /// Degrees, counter-clockwise.
    #[arg(long, allow_hyphen_values = true)]
    pub angle: f64,
    /// The plane's two axes, A,B (default scipy's 1,0; a colour image's image axes).
    #[arg(long)]
    #[serde(default)]
    pub axes: Option<List<usize>>,
    /// Keep the input's shape (the corners are cut) instead of enlarging the output to hold it all (in a pipeline
    /// file `reshape = false`).
    #[arg(long = "no-reshape", action = clap::ArgAction::SetFalse)]
    #[serde(default = "yes")]
    pub reshape: bool,
    /// The spline interpolation.
    #[command(flatten)]
    #[serde(flatten)]
    pub interp: InterpArgs,
}

impl Named for RotateArgs {
    const NAME: &'static str = "rotate";
}

impl Operation for RotateArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let (a, b) = match self.axes.as_ref().map(|a| a.0.as_slice()) {
            None => (1, 0),
            Some(&[a, b]) => (a, b),
            Some(other) => {
                return Err(Error::invalid(Self::NAME, format!("axes {other:?}: give the plane's two axes")));
            }
        };
        let mut p = ResampleParams::rotate(self.angle).axes(a, b).reshape(self.reshape);
        p.interpolation = self.interp.interpolation(Self::NAME)?;
        resample(inputs, p)
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "resamples with a spline prefilter along whole lines"))
    }
    fn for_colour(&self, shape: &[usize]) -> Result<Self> {
        let nd = shape.len();
        match &self.axes {
            None => Ok(RotateArgs { axes: Some(List(vec![nd - 2, nd - 1])), ..self.clone() }),
            Some(a) if a.0.contains(&(nd - 3)) => Err(Error::invalid(
                Self::NAME,
                format!(
                    "axes {:?} of a colour image of shape {shape:?} would rotate the channels (axis {})",
                    a.0,
                    nd - 3
                ),
            )),
            Some(_) => Ok(self.clone()),
        }
    }
    fn geometry(&self, geometry: &Geometry, input: &[usize], output: &[usize], colour: bool) -> Option<Geometry> {
        // A rotation that reshapes keeps the centres together.
        let spatial = Geometry::spatial_axes(input.len(), colour);
        let first = 3 - spatial.len().min(3);
        let mut by = [0.0; 3];
        for (k, &axis) in spatial.iter().enumerate() {
            *by.get_mut(first + k)? = (*input.get(axis)? as f64 - *output.get(axis)? as f64) / 2.0;
        }
        Some(geometry.shifted(by))
    }
    fn overshoots(&self) -> bool {
        true
    }
}

/// scipy.ndimage.affine_transform: output o reads the input at matrix · o + offset.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'affine-transform'\nmatrix = '1,0.2;0,1'")?;
/// assert_eq!(step.name(), "affine-transform");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Example: cliper affine-transform data/phantom_256.png out/sheared.png --matrix '1,0.2;0,1' --offset=-20,0\n\nRows separated by ';', values by ','; a last column is the offset, a last row 0,…,0,1 makes it homogeneous, one row is the diagonal. A colour image's matrix is for its two image axes."
)]
pub struct AffineTransformArgs {
    /// The matrix: rows separated by ';', values by ',' (ndim × ndim, with a last column for the offset, homogeneous
    /// (ndim + 1)², or one row: the diagonal).
    #[arg(long, allow_hyphen_values = true)]
    pub matrix: String,
    /// One offset, or one per axis.
    #[arg(long, allow_hyphen_values = true)]
    #[serde(default)]
    pub offset: Option<String>,
    /// The output shape, N,N,… (default the input's).
    #[arg(long)]
    #[serde(default)]
    pub output_shape: Option<List<usize>>,
    /// The spline interpolation.
    #[command(flatten)]
    #[serde(flatten)]
    pub interp: InterpArgs,
}

impl Named for AffineTransformArgs {
    const NAME: &'static str = "affine-transform";
}

impl Operation for AffineTransformArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let offset = match &self.offset {
            Some(t) => numbers(Self::NAME, "offset", t)?,
            None => vec![0.0],
        };
        let mut p = ResampleParams::affine(&matrix_rows(&self.matrix)?, &offset);
        if let Some(shape) = &self.output_shape {
            p = p.output_shape(&shape.0);
        }
        p.interpolation = self.interp.interpolation(Self::NAME)?;
        resample(inputs, p)
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "resamples with a spline prefilter along whole lines"))
    }
    fn for_colour(&self, shape: &[usize]) -> Result<Self> {
        affine_for_colour(self, shape)
    }
    fn overshoots(&self) -> bool {
        true
    }
}

/// The transform of a colour image: the matrix given is for the two image axes, and the channel axis joins as
/// the identity.
fn affine_for_colour(op: &AffineTransformArgs, shape: &[usize]) -> Result<AffineTransformArgs> {
    let name = AffineTransformArgs::NAME;
    let nd = shape.len();
    let rows = matrix_rows(&op.matrix)?;
    let (m, b): (Vec<Vec<f64>>, Vec<f64>) = match (rows.len(), rows.first().map_or(0, Vec::len)) {
        (1, 2) => {
            let d = rows.first().cloned().unwrap_or_default();
            let (d0, d1) = (d.first().copied().unwrap_or(1.0), d.get(1).copied().unwrap_or(1.0));
            (vec![vec![d0, 0.0], vec![0.0, d1]], vec![])
        }
        (2, 2) => (rows, vec![]),
        (2, 3) | (3, 3) => (
            rows.iter().take(2).map(|r| r.iter().take(2).copied().collect()).collect(),
            rows.iter().take(2).map(|r| r.get(2).copied().unwrap_or(0.0)).collect(),
        ),
        (r, c) => {
            return Err(Error::invalid(
                name,
                format!(
                    "a {r}×{c} matrix for a colour image of shape {shape:?}: give the two image axes' matrix (2×2, \
                     2×3, 3×3 homogeneous or one row of 2)"
                ),
            ));
        }
    };
    let offsets = match (b.is_empty(), op.offset.as_deref()) {
        (false, _) => b,
        (true, None) => vec![0.0, 0.0],
        (true, Some(t)) => match numbers(name, "offset", t)?.as_slice() {
            [one] => vec![*one; 2],
            [a, c] => vec![*a, *c],
            _ => return Err(Error::invalid(name, format!("offset `{t}`: give one, or one per image axis"))),
        },
    };
    let mut full: Vec<Vec<f64>> =
        (0..nd - 2).map(|i| (0..nd).map(|j| if i == j { 1.0 } else { 0.0 }).collect()).collect();
    for row in &m {
        let mut r = vec![0.0; nd - 2];
        r.extend(row.iter().copied());
        full.push(r);
    }
    let mut offset = vec![0.0; nd - 2];
    offset.extend(offsets);
    let output_shape = op.output_shape.as_ref().map(|s| match s.0.len() {
        2 => List(shape.iter().take(nd - 2).chain(&s.0).copied().collect()),
        _ => s.clone(),
    });
    Ok(AffineTransformArgs {
        matrix: rows_text(&full),
        offset: Some(offset.iter().map(f64::to_string).collect::<Vec<_>>().join(",")),
        output_shape,
        interp: op.interp.clone(),
    })
}

/// scipy.ndimage.map_coordinates: INPUT interpolated at the points COORDINATES holds (shape [ndim, …]).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'map-coordinates'")?;
/// assert_eq!(step.name(), "map-coordinates");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper map-coordinates image.npy points.npy out/values.npy --order 1")]
pub struct MapCoordinatesArgs {
    /// The spline interpolation.
    #[command(flatten)]
    #[serde(flatten)]
    pub interp: InterpArgs,
}

impl Named for MapCoordinatesArgs {
    const NAME: &'static str = "map-coordinates";
    const INPUTS: Inputs = Inputs {
        names: &[
            ("INPUT", "The data"),
            (
                "COORDINATES",
                "The coordinates: a real array of shape [ndim, *output_shape] (row k along the data's axis k)",
            ),
        ],
        variadic: false,
        optional: false,
        prints: false,
    };
}

impl Operation for MapCoordinatesArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let [x, c] = inputs else { return Err(Error::invalid(Self::NAME, "takes two inputs")) };
        let params = self.interp.interpolation(Self::NAME)?;
        fn typed<T: Kind>(x: &XData<T>, c: &XData<T::Real>, params: Interpolation) -> Result<Planned> {
            let y = XData::<T>::zeros(x.app(), &MapCoordinates::<T>::output_shape(x.shape(), c.shape(), &params)?)?;
            Ok((Box::new(MapCoordinates::new(x, c, &y, params)), T::wrap(y)))
        }
        match (x, c) {
            (AnyData::F32(x), AnyData::F32(c)) => typed(x, c, params),
            (AnyData::F64(x), AnyData::F64(c)) => typed(x, c, params),
            (AnyData::C32(x), AnyData::F32(c)) => typed(x, c, params),
            (AnyData::C64(x), AnyData::F64(c)) => typed(x, c, params),
            _ => Err(Error::TypeRule {
                op: Self::NAME.into(),
                rule: format!(
                    "real coordinates of the data's precision ({} data takes {} coordinates)",
                    x.kind().name(),
                    if matches!(x, AnyData::F64(_) | AnyData::C64(_)) { "f64" } else { "f32" }
                ),
                got: c.kind().name(),
            }),
        }
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "reads anywhere the coordinates point"))
    }
    fn geometry(&self, _: &Geometry, _: &[usize], _: &[usize], _: bool) -> Option<Geometry> {
        None
    }
    fn overshoots(&self) -> bool {
        true
    }
}

/// nibabel.processing.resample_from_to: INPUT resampled by spline interpolation onto REFERENCE's voxel grid — each
/// output voxel read in INPUT where REFERENCE's affine puts it — so that the result has REFERENCE's shape and
/// geometry.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'resample-from-to'\norder = 1")?;
/// assert_eq!((step.name(), step.arity()), ("resample-from-to", 2));
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Example: cliper resample-from-to scan.nii.gz atlas.nii.gz out/scan_on_atlas.nii.gz --order 1\n\nBoth files need a geometry (NIfTI, DICOM, NRRD, MetaImage); only REFERENCE's voxel grid is used (its values are read but not used). The axes before INPUT's three spatial ones (time) stay as they are."
)]
pub struct ResampleFromToArgs {
    /// The spline interpolation (nibabel's default order 3, mode constant, cval 0).
    #[command(flatten)]
    #[serde(flatten)]
    pub interp: InterpArgs,
    /// Resolved from the two inputs' geometries before planning (not a parameter).
    #[arg(skip)]
    #[serde(skip)]
    pub grid: Option<ReferenceGrid>,
}

/// The voxel grid `resample-from-to` resamples onto, and the map into its input's voxels: the reference's
/// spatial shape and geometry, and [`Geometry::voxels_from`] of the input's geometry.
///
/// ```
/// use cliper::Geometry;
/// use cliper::chain::ReferenceGrid;
/// let input = Geometry::from_spacing([1.0, 1.0, 1.0]);
/// let reference = Geometry::from_spacing([2.0, 2.0, 2.0]);
/// let grid = ReferenceGrid::new(&input, &[20, 30, 40], &reference)?;
/// assert_eq!(grid.shape, [20, 30, 40]);
/// assert_eq!(grid.matrix[1], [0.0, 2.0, 0.0]); // a reference row is two of the input's
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReferenceGrid {
    /// The reference's spatial shape (slices, rows, columns): the result's.
    pub shape: [usize; 3],
    /// The reference's geometry: the result's.
    pub geometry: Geometry,
    /// Input voxel = `matrix` · reference voxel + `offset` (slice, row, column).
    pub matrix: [[f64; 3]; 3],
    /// See `matrix`.
    pub offset: [f64; 3],
}

impl ReferenceGrid {
    /// The grid of a reference whose spatial axes have extents `shape` and the geometry `reference`, seen from an
    /// input of geometry `input`.
    pub fn new(input: &Geometry, shape: &[usize; 3], reference: &Geometry) -> Result<ReferenceGrid> {
        let (matrix, offset) =
            input.voxels_from(reference).map_err(|e| e.with_op(|_| format!("{} (INPUT)", ResampleFromToArgs::NAME)))?;
        Ok(ReferenceGrid { shape: *shape, geometry: *reference, matrix, offset })
    }

    /// scipy's affine_transform of an input of `shape` onto this grid: the map over every axis (the axes before
    /// the three spatial ones unchanged) and the output shape.
    fn resample_params(&self, shape: &[usize]) -> Result<ResampleParams> {
        let first = shape.len().checked_sub(3).ok_or_else(|| {
            Error::invalid(ResampleFromToArgs::NAME, format!("needs a volume, not data of shape {shape:?}"))
        })?;
        let nd = shape.len();
        let mut matrix: Vec<Vec<f64>> =
            (0..nd).map(|i| (0..nd).map(|j| f64::from(u8::from(i == j))).collect()).collect();
        let mut offset = vec![0.0; nd];
        for (k, (row, b)) in self.matrix.iter().zip(self.offset).enumerate() {
            if let (Some(to), Some(at)) = (matrix.get_mut(first + k), offset.get_mut(first + k)) {
                to.splice(first.., row.iter().copied());
                *at = b;
            }
        }
        let mut output: Vec<usize> = shape.iter().take(first).copied().collect();
        output.extend(self.shape);
        Ok(ResampleParams::affine(&matrix, &offset).output_shape(&output))
    }
}

impl Named for ResampleFromToArgs {
    const NAME: &'static str = "resample-from-to";
    const INPUTS: Inputs = Inputs {
        names: &[
            ("INPUT", "The image to resample (NIfTI, DICOM, NRRD or MetaImage: it needs a geometry)"),
            ("REFERENCE", "The image whose voxel grid (shape and geometry) the result takes; its values are not used"),
        ],
        variadic: false,
        optional: false,
        prints: false,
    };
}

/// What `resample-from-to` needs of its inputs and lacks: a one-line refusal.
fn needs_geometries(what: &str) -> Error {
    Error::invalid(
        ResampleFromToArgs::NAME,
        format!("needs the geometries of INPUT and REFERENCE (NIfTI, DICOM, NRRD, MetaImage); {what}"),
    )
}

impl Operation for ResampleFromToArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let [x, _reference] = inputs else { return Err(Error::invalid(Self::NAME, "takes two inputs")) };
        let grid = self.grid.ok_or_else(|| needs_geometries("plain arrays have none"))?;
        let mut params = grid.resample_params(x.shape())?;
        params.interpolation = self.interp.interpolation(Self::NAME)?;
        resample(&[x], params)
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "resamples with a spline prefilter along whole lines"))
    }
    fn for_colour(&self, shape: &[usize]) -> Result<Self> {
        Err(colour_refusal(Self::NAME, shape, "resampling onto another grid"))
    }
    fn on_grids(&self, inputs: &[InputGrid<'_>]) -> Result<Self> {
        let [(shape, input), (reference_shape, reference)] = inputs else {
            return Err(Error::invalid(Self::NAME, format!("takes two inputs, got {}", inputs.len())));
        };
        let (input, reference) = match (input, reference) {
            (Some(input), Some(reference)) => (input, reference),
            (None, _) => return Err(needs_geometries(&format!("INPUT (shape {shape:?}) has none"))),
            (_, None) => return Err(needs_geometries(&format!("REFERENCE (shape {reference_shape:?}) has none"))),
        };
        let spatial = match reference_shape {
            [.., a, b, c] => [*a, *b, *c],
            _ => {
                return Err(Error::invalid(
                    Self::NAME,
                    format!("REFERENCE needs three spatial axes, not the shape {reference_shape:?}"),
                ));
            }
        };
        if shape.len() < 3 {
            return Err(Error::invalid(Self::NAME, format!("INPUT needs three spatial axes, not the shape {shape:?}")));
        }
        Ok(ResampleFromToArgs { grid: Some(ReferenceGrid::new(input, &spatial, reference)?), ..self.clone() })
    }
    fn geometry(&self, geometry: &Geometry, _input: &[usize], _output: &[usize], _colour: bool) -> Option<Geometry> {
        // The reference's grid; the axes before the spatial ones are the input's.
        self.grid.map(|g| Geometry { time_step: geometry.time_step, ..g.geometry })
    }
    fn value_inputs(&self) -> usize {
        1
    }
    fn overshoots(&self) -> bool {
        true
    }
}

fn mirror() -> InterpMode {
    InterpMode::Mirror
}

/// scipy.ndimage.spline_filter (spline_filter1d with --axis): B-spline coefficients, for interpolation with
/// --no-prefilter later.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'spline-filter'")?;
/// assert_eq!(step.name(), "spline-filter");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper spline-filter vol.npy out/coefficients.npy --order 3 --mode mirror")]
pub struct SplineFilterArgs {
    /// The spline order, 2 to 5 (0 and 1 copy).
    #[arg(long, default_value_t = 3)]
    #[serde(default = "three")]
    pub order: usize,
    /// scipy's mode.
    #[arg(long, default_value = "mirror")]
    #[serde(default = "mirror", deserialize_with = "by_name")]
    pub mode: InterpMode,
    /// One axis only (negative counts from the last).
    #[arg(long, allow_negative_numbers = true)]
    #[serde(default)]
    pub axis: Option<isize>,
    /// Only the last RANK axes (default every axis, up to three; a colour image's two image axes).
    #[arg(long)]
    #[serde(default)]
    pub rank: Option<usize>,
}

impl Named for SplineFilterArgs {
    const NAME: &'static str = "spline-filter";
}

impl Operation for SplineFilterArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        let mut p = SplineParams::new(self.order).mode(self.mode);
        if let Some(r) = self.rank {
            p = p.rank(r);
        }
        if let Some(a) = self.axis {
            p = p.axis(resolve_axis(Self::NAME, a, x.shape())?);
        }
        dispatch!(x, x => spline_filter(x, p.clone()))
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "is a recursive filter along whole lines"))
    }
    fn for_colour(&self, shape: &[usize]) -> Result<Self> {
        let nd = shape.len() as isize;
        match self.axis {
            None => Ok(SplineFilterArgs { rank: Some(2), ..self.clone() }),
            Some(a) if a == nd - 3 || a == -3 => Err(Error::invalid(
                Self::NAME,
                format!("axis {a} of a colour image of shape {shape:?} is its channels: filter an image axis"),
            )),
            Some(_) => Ok(self.clone()),
        }
    }
}

fn spline_filter<T: Kind>(x: &XData<T>, p: SplineParams) -> Result<Planned> {
    let y = XData::<T>::zeros(x.app(), &SplineFilter::<T>::output_shape(x.shape(), &p)?)?;
    Ok((Box::new(SplineFilter::new(x, &y, p)), T::wrap(y)))
}

/// The resampling process of a one-input step.
fn resample(inputs: &[&AnyData], params: ResampleParams) -> Result<Planned> {
    fn typed<T: Kind>(x: &XData<T>, params: ResampleParams) -> Result<Planned> {
        let y = XData::<T>::zeros(x.app(), &Resample::<T>::output_shape(x.shape(), &params)?)?;
        Ok((Box::new(Resample::new(x, &y, params)), T::wrap(y)))
    }
    let [x] = inputs else { return Err(Error::invalid("resample", "takes one input")) };
    dispatch!(x, x => typed(x, params.clone()))
}

/// A matrix written as rows separated by `;` and values by `,`.
fn matrix_rows(text: &str) -> Result<Vec<Vec<f64>>> {
    text.split(';').map(|row| numbers("affine-transform", "matrix", row)).collect()
}

fn rows_text(rows: &[Vec<f64>]) -> String {
    rows.iter().map(|r| r.iter().map(f64::to_string).collect::<Vec<_>>().join(",")).collect::<Vec<_>>().join(";")
}

/// Per-axis values for a colour image of `shape` (channels on axis nd − 3): one value, or one per image axis,
/// become one per axis with `keep` on the channel axis; a value per axis must leave the channels alone.
fn colour_values(op: &str, what: &str, text: &str, keep: f64, shape: &[usize]) -> Result<String> {
    let nd = shape.len();
    let v = numbers(op, what, text)?;
    let image: Vec<f64> = match v.as_slice() {
        [one] => vec![*one; 2],
        [a, b] => vec![*a, *b],
        all if all.len() == nd && all.get(nd - 3) == Some(&keep) => all.iter().skip(nd - 2).copied().collect(),
        _ => {
            return Err(Error::invalid(
                op,
                format!(
                    "{what} `{text}` for a colour image of shape {shape:?}: give one value or one per image axis (the \
                     channels on axis {} stay as they are)",
                    nd - 3
                ),
            ));
        }
    };
    let mut all = vec![keep; nd - 2];
    all.extend(image);
    Ok(all.iter().map(f64::to_string).collect::<Vec<_>>().join(","))
}

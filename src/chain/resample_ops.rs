//! The resampling steps of [`Op`] (`zoom`, `shift`, `rotate`, `affine-transform`, `map-coordinates`,
//! `spline-filter`): their parameters parsed, adapted to colour images and to voxel sizes in millimetres, the
//! geometry of their results, and their processes.

use super::any_data::{AnyData, Kind};
use super::ops::Op;
use crate::Result;
use crate::io::Geometry;
use crate::prelude::*;

/// Numbers separated by commas: `"2"`, `"1,2,2"`.
fn numbers(op: &str, what: &str, text: &str) -> Result<Vec<f64>> {
    text.split(',')
        .map(|t| {
            let t = t.trim();
            t.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| Error::invalid(op, format!("`{t}` in {what} `{text}` is not a number")))
        })
        .collect()
}

/// A matrix written as rows separated by `;` and values by `,`.
fn matrix_rows(text: &str) -> Result<Vec<Vec<f64>>> {
    text.split(';').map(|row| numbers("affine-transform", "matrix", row)).collect()
}

fn rows_text(rows: &[Vec<f64>]) -> String {
    rows.iter().map(|r| r.iter().map(f64::to_string).collect::<Vec<_>>().join(",")).collect::<Vec<_>>().join(";")
}

/// Per-axis values for a colour image of `nd` axes (channels on axis nd − 3): one value, or one per image axis,
/// become one per axis with `keep` on the channel axis; a value per axis must leave the channels alone.
fn colour_values(op: &str, what: &str, text: &str, nd: usize, keep: f64, shape: &[usize]) -> Result<String> {
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

/// The step as it applies to a colour image of `shape`: interpolation on the two image axes, per channel.
pub(super) fn for_colour(op: &Op, shape: &[usize]) -> Result<Op> {
    let nd = shape.len();
    let name = op.name();
    let mut op = op.clone();
    match &mut op {
        Op::Zoom { zoom: Some(zoom), .. } => *zoom = colour_values(name, "zoom", zoom, nd, 1.0, shape)?,
        Op::Shift { shift, .. } => *shift = colour_values(name, "shift", shift, nd, 0.0, shape)?,
        Op::Rotate { axes, .. } => match axes.as_deref() {
            None => *axes = Some(vec![nd - 2, nd - 1]),
            Some(a) if a.contains(&(nd - 3)) => {
                return Err(Error::invalid(
                    name,
                    format!(
                        "axes {a:?} of a colour image of shape {shape:?} would rotate the channels (axis {})",
                        nd - 3
                    ),
                ));
            }
            Some(_) => {}
        },
        Op::AffineTransform { matrix, offset, output_shape, .. } => {
            // The matrix is for the two image axes: the channel axis joins as the identity.
            let rows = matrix_rows(matrix)?;
            let (m, b): (Vec<Vec<f64>>, Vec<f64>) = match (rows.len(), rows.first().map_or(0, Vec::len)) {
                (1, 2) => {
                    let d = rows.first().cloned().unwrap_or_default();
                    (
                        vec![vec![d.first().copied().unwrap_or(1.0), 0.0], vec![0.0, d.get(1).copied().unwrap_or(1.0)]],
                        vec![],
                    )
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
                            "a {r}×{c} matrix for a colour image of shape {shape:?}: give the two image axes' matrix \
                             (2×2, 2×3, 3×3 homogeneous or one row of 2)"
                        ),
                    ));
                }
            };
            let offsets = match (b.is_empty(), offset.as_deref()) {
                (false, _) => b,
                (true, None) => vec![0.0, 0.0],
                (true, Some(t)) => {
                    let v = numbers(name, "offset", t)?;
                    match v.as_slice() {
                        [one] => vec![*one; 2],
                        [a, c] => vec![*a, *c],
                        _ => {
                            return Err(Error::invalid(name, format!("offset `{t}`: give one, or one per image axis")));
                        }
                    }
                }
            };
            let mut full: Vec<Vec<f64>> = Vec::with_capacity(nd);
            for i in 0..nd - 2 {
                full.push((0..nd).map(|j| if i == j { 1.0 } else { 0.0 }).collect());
            }
            for row in &m {
                let mut r = vec![0.0; nd - 2];
                r.extend(row.iter().copied());
                full.push(r);
            }
            *matrix = rows_text(&full);
            let mut off = vec![0.0; nd - 2];
            off.extend(offsets);
            *offset = Some(off.iter().map(f64::to_string).collect::<Vec<_>>().join(","));
            if let Some(s) = output_shape.as_mut().filter(|s| s.len() == 2) {
                let mut full_shape: Vec<usize> = shape.iter().take(nd - 2).copied().collect();
                full_shape.extend(s.iter().copied());
                *s = full_shape;
            }
        }
        Op::SplineFilter { axis: None, rank, .. } => *rank = Some(2),
        Op::SplineFilter { axis: Some(a), .. } if *a == nd as isize - 3 || *a == -3 => {
            return Err(Error::invalid(
                name,
                format!("axis {a} of a colour image of shape {shape:?} is its channels: filter an image axis"),
            ));
        }
        _ => {}
    }
    Ok(op)
}

/// A zoom given as a voxel size in mm turned into factors: per spatial axis, the sample count that covers the
/// input's extent at that voxel size, over the input's count.
pub(super) fn in_voxels(op: &Op, geometry: Option<&Geometry>, shape: &[usize], colour: bool) -> Result<Op> {
    let Op::Zoom { zoom, spacing: Some(spacing), grid_mode, order, mode, cval, prefilter } = op else {
        return Ok(op.clone());
    };
    if zoom.is_some() {
        return Err(Error::invalid("zoom", "give `zoom` (factors) or `spacing` (mm), not both"));
    }
    let Some(g) = geometry else {
        return Err(Error::invalid(
            "zoom",
            "`spacing` in mm needs the input's voxel size, which only DICOM, NIfTI, NRRD and MetaImage inputs carry; \
             give zoom factors instead",
        ));
    };
    let wanted = numbers("zoom", "spacing", spacing)?;
    if let Some(bad) = wanted.iter().find(|v| **v <= 0.0) {
        return Err(Error::invalid("zoom", format!("a voxel size must be positive, got {bad}")));
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
                    "zoom",
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
        let m = if *grid_mode {
            (n as f64 * extent).round().max(1.0)
        } else {
            ((n.saturating_sub(1)) as f64 * extent).round() + 1.0
        };
        if let Some(f) = factors.get_mut(axis) {
            *f = m / n.max(1) as f64;
        }
    }
    Ok(Op::Zoom {
        zoom: Some(factors.iter().map(f64::to_string).collect::<Vec<_>>().join(",")),
        spacing: None,
        grid_mode: *grid_mode,
        order: *order,
        mode: mode.clone(),
        cval: *cval,
        prefilter: *prefilter,
    })
}

/// Where the result's voxels lie: a zoom scales the spacing (and, in grid mode, moves the origin by the change of
/// half a voxel); a rotation that reshapes keeps the centres together; the other steps keep the grid (the content
/// moves on it); map-coordinates has none.
pub(super) fn geometry(
    op: &Op,
    geometry: &Geometry,
    input: &[usize],
    output: &[usize],
    colour: bool,
) -> Option<Geometry> {
    let spatial = Geometry::spatial_axes(input.len(), colour);
    let first = 3 - spatial.len().min(3);
    match op {
        Op::Zoom { grid_mode, .. } => {
            let mut g = *geometry;
            let mut by = [0.0; 3];
            for (k, &axis) in spatial.iter().enumerate() {
                let (n, m) = (*input.get(axis)? as f64, *output.get(axis)? as f64);
                let step = if *grid_mode {
                    n / m
                } else if m > 1.0 {
                    (n - 1.0) / (m - 1.0)
                } else {
                    1.0
                };
                if *grid_mode {
                    *by.get_mut(first + k)? = (step - 1.0) / 2.0;
                }
                *g.spacing.get_mut(first + k)? *= step;
            }
            let origin = geometry.shifted(by).origin;
            Some(Geometry { origin, ..g })
        }
        Op::Rotate { .. } => {
            let mut by = [0.0; 3];
            for (k, &axis) in spatial.iter().enumerate() {
                *by.get_mut(first + k)? = (*input.get(axis)? as f64 - *output.get(axis)? as f64) / 2.0;
            }
            Some(geometry.shifted(by))
        }
        Op::Shift { .. } | Op::AffineTransform { .. } | Op::SplineFilter { .. } => Some(*geometry),
        _ => None,
    }
}

fn interpolation(op: &str, order: usize, mode: &str, cval: f64, prefilter: bool) -> Result<Interpolation> {
    if order > 5 {
        return Err(Error::invalid(op, format!("spline order {order} is not supported: use 0 to 5")));
    }
    Ok(Interpolation::new(order).mode(InterpMode::parse(mode)?).cval(cval).prefilter(prefilter))
}

/// The resampling process of a one-input step.
pub(super) fn plan_unary<T: Kind>(op: &Op, x: &XData<T>) -> Result<(Box<dyn Process>, AnyData)> {
    let name = op.name();
    let nd = x.shape().len();
    let params = match op {
        Op::Zoom { zoom, spacing, grid_mode, order, mode, cval, prefilter } => {
            let Some(zoom) = zoom else {
                return Err(Error::invalid(
                    name,
                    if spacing.is_some() {
                        "`spacing` in mm needs the input's voxel size (DICOM, NIfTI, NRRD, MetaImage); give zoom \
                         factors instead"
                    } else {
                        "give `zoom` (factors) or `spacing` (mm)"
                    },
                ));
            };
            let mut p = ResampleParams::zoom(&numbers(name, "zoom", zoom)?).grid_mode(*grid_mode);
            p.interpolation = interpolation(name, *order, mode, *cval, *prefilter)?;
            p
        }
        Op::Shift { shift, order, mode, cval, prefilter } => {
            let mut p = ResampleParams::shift(&numbers(name, "shift", shift)?);
            p.interpolation = interpolation(name, *order, mode, *cval, *prefilter)?;
            p
        }
        Op::Rotate { angle, axes, reshape, order, mode, cval, prefilter } => {
            let (a, b) = match axes.as_deref() {
                None => (1, 0),
                Some([a, b]) => (*a, *b),
                Some(other) => {
                    return Err(Error::invalid(name, format!("axes {other:?}: give the plane's two axes")));
                }
            };
            let mut p = ResampleParams::rotate(*angle).axes(a, b).reshape(*reshape);
            p.interpolation = interpolation(name, *order, mode, *cval, *prefilter)?;
            p
        }
        Op::AffineTransform { matrix, offset, output_shape, order, mode, cval, prefilter } => {
            let offset = match offset {
                Some(t) => numbers(name, "offset", t)?,
                None => vec![0.0],
            };
            let mut p = ResampleParams::affine(&matrix_rows(matrix)?, &offset);
            if let Some(shape) = output_shape {
                p = p.output_shape(shape);
            }
            p.interpolation = interpolation(name, *order, mode, *cval, *prefilter)?;
            p
        }
        Op::SplineFilter { order, mode, axis, rank } => {
            let mut p = SplineParams::new(*order).mode(InterpMode::parse(mode)?);
            if let Some(r) = rank {
                p = p.rank(*r);
            }
            if let Some(a) = axis {
                let resolved = if *a < 0 { nd as isize + a } else { *a };
                if resolved < 0 || resolved >= nd as isize {
                    return Err(Error::invalid(
                        name,
                        format!("axis {a} is out of range for an array of shape {:?}", x.shape()),
                    ));
                }
                p = p.axis(resolved as usize);
            }
            let y = XData::<T>::zeros(x.app(), &SplineFilter::<T>::output_shape(x.shape(), &p)?)?;
            return Ok((Box::new(SplineFilter::new(x, &y, p)), T::wrap(y)));
        }
        _ => return Err(Error::invalid(name, "is not a one-input resampling step")),
    };
    let y = XData::<T>::zeros(x.app(), &Resample::<T>::output_shape(x.shape(), &params)?)?;
    Ok((Box::new(Resample::new(x, &y, params)), T::wrap(y)))
}

/// map-coordinates of `x` at the coordinates `c` (real, of `x`'s precision).
pub(super) fn plan_map(op: &Op, x: &AnyData, c: &AnyData) -> Result<(Box<dyn Process>, AnyData)> {
    let Op::MapCoordinates { order, mode, cval, prefilter } = op else {
        return Err(Error::invalid(op.name(), "is not map-coordinates"));
    };
    let params = interpolation(op.name(), *order, mode, *cval, *prefilter)?;
    fn typed<T: Kind>(x: &XData<T>, c: &XData<T::Real>, params: Interpolation) -> Result<(Box<dyn Process>, AnyData)> {
        let y = XData::<T>::zeros(x.app(), &MapCoordinates::<T>::output_shape(x.shape(), c.shape(), &params)?)?;
        Ok((Box::new(MapCoordinates::new(x, c, &y, params)), T::wrap(y)))
    }
    match (x, c) {
        (AnyData::F32(x), AnyData::F32(c)) => typed(x, c, params),
        (AnyData::F64(x), AnyData::F64(c)) => typed(x, c, params),
        (AnyData::C32(x), AnyData::F32(c)) => typed(x, c, params),
        (AnyData::C64(x), AnyData::F64(c)) => typed(x, c, params),
        _ => Err(Error::Type {
            op: op.name().into(),
            expected: format!(
                "real coordinates of the data's precision ({} data takes {} coordinates)",
                x.kind().name(),
                if matches!(x, AnyData::F64(_) | AnyData::C64(_)) { "f64" } else { "f32" }
            ),
            got: c.kind().name().into(),
        }),
    }
}

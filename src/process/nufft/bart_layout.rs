//! BART's layouts for non-Cartesian data, as `bart traj`, `bart nufft` and `bart pics -t` read and write them
//! (CFL files load in BART's indexing, `x[i, j, …]` = BART's `(i, j, …)`): trajectories `[3, samples…]` (k_x, k_y,
//! k_z in cycles per FOV, imaginary parts 0), samples `[1, samples…, coils]` (coils in BART's dimension 3), images
//! `[x, y, z, …]`. Points are numbered as BART's memory orders the sample dimensions (the first fastest).

use super::points::NufftPoints;
use crate::error::{Error, Result};
use ndarray::{ArrayD, IxDyn};
use num_complex::Complex64;

/// BART's coil dimension.
const COIL_DIM: usize = 3;

/// BART's estimate of the image grid of a trajectory (`estimate_im_dims`, what `bart nufft -a` uses without `-d`):
/// `2⌈max |k_d|⌉` along each of the first three dimensions, 1 where every `k_d` is 0. `traj` is `[3, samples…]`
/// (`bart traj`'s layout); `source` names it in a refusal.
///
/// ```
/// use cliper::ndarray::{ArrayD, IxDyn};
/// use num_complex::Complex64 as C;
/// // Two points, (19.5, 1, 0) and (−2, −3.2, 0): [3, points], a row per coordinate.
/// let values = [19.5, -2.0, 1.0, -3.2, 0.0, 0.0].map(|v| C::new(v, 0.0));
/// let traj = ArrayD::from_shape_vec(IxDyn(&[3, 2]), values.to_vec()).unwrap();
/// assert_eq!(cliper::bart_image_dims(&traj, "traj")?, [40, 8, 1]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn bart_image_dims(traj: &ArrayD<Complex64>, source: &str) -> Result<[usize; 3]> {
    if traj.shape().first() != Some(&3) {
        return Err(Error::invalid(
            "bart_image_dims",
            format!("{source}: a trajectory is [3, samples…] as bart traj writes it; got shape {:?}", traj.shape()),
        ));
    }
    let mut dims = [1usize; 3];
    for (d, slot) in dims.iter_mut().enumerate() {
        let largest = traj.index_axis(ndarray::Axis(0), d).iter().fold(0.0f64, |m, v| m.max(v.norm()));
        *slot = if largest == 0.0 { 1 } else { 2 * largest.ceil() as usize };
    }
    Ok(dims)
}

/// The image axes of BART's image dimensions `dims` (`[x, y, z]`, as `bart nufft -d x:y:z` gives them): the
/// axes longer than 1 (1 to 3 of them), and which of BART's first three dimensions they are.
pub fn bart_image_axes(dims: &[usize; 3]) -> Result<(Vec<usize>, Vec<usize>)> {
    let axes: Vec<usize> = (0..3).filter(|&d| dims.get(d).is_some_and(|&n| n > 1)).collect();
    if axes.is_empty() || dims.contains(&0) {
        return Err(Error::invalid("Nufft", format!("image dimensions {dims:?}: at least one must be longer than 1")));
    }
    Ok((axes.iter().filter_map(|&d| dims.get(d).copied()).collect(), axes))
}

impl NufftPoints {
    /// The points of a BART trajectory `traj` (`[3, samples…]`) for an image of BART's dimensions `dims`; the
    /// coordinates along dimensions of length 1 are not used (the image is constant along them). `source`
    /// names the file in refusals: a first dimension other than 3, imaginary parts, NaN and out-of-range points.
    ///
    /// ```
    /// use cliper::NufftPoints;
    /// use ndarray::{ArrayD, IxDyn};
    /// use num_complex::Complex64 as C;
    /// // Two samples × one spoke, as `bart traj` writes: (k_x, k_y, k_z) per sample.
    /// let traj = ArrayD::from_shape_vec(IxDyn(&[3, 2, 1]), vec![C::new(-1.0, 0.0), C::new(1.0, 0.0), C::new(0.5, 0.0), C::new(2.0, 0.0), C::new(0.0, 0.0), C::new(0.0, 0.0)]).unwrap();
    /// let p = NufftPoints::from_bart(&traj, &[8, 8, 1], "t.cfl")?;
    /// assert_eq!(p.coords(), &[-1.0, 0.5, 1.0, 2.0]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn from_bart(traj: &ArrayD<Complex64>, dims: &[usize; 3], source: &str) -> Result<NufftPoints> {
        if traj.shape().first() != Some(&3) {
            return Err(Error::invalid(
                "Nufft",
                format!("{source}: a trajectory is [3, samples…] as bart traj writes it; got shape {:?}", traj.shape()),
            ));
        }
        if let Some(bad) = traj.iter().find(|v| v.im != 0.0) {
            return Err(Error::invalid(
                "Nufft",
                format!("{source}: a trajectory coordinate has an imaginary part ({bad}); coordinates are real"),
            ));
        }
        let (shape, axes) = bart_image_axes(dims)?;
        let count = traj.len() / 3;
        let mut coords = Vec::with_capacity(count * axes.len());
        // BART's memory order: the sample dimensions' first fastest, i.e. column-major over [samples…].
        for m in 0..count {
            let index = column_major_index(traj.shape(), m);
            for &d in &axes {
                let mut at = index.clone();
                if let Some(first) = at.first_mut() {
                    *first = d;
                }
                coords.push(traj.get(at.as_slice()).map_or(f64::NAN, |v| v.re));
            }
        }
        NufftPoints::named(&shape, coords, source)
    }
}

/// The index `[0, i1, i2, …]` of the `m`-th element of the dimensions after the first of `shape`, in column-major
/// order.
fn column_major_index(shape: &[usize], m: usize) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    let mut rest = m;
    for (slot, &n) in index.iter_mut().zip(shape).skip(1) {
        *slot = rest % n.max(1);
        rest /= n.max(1);
    }
    index
}

/// BART's samples `[1, samples…, coils, …]` as `[coils, points]` in the trajectory's point order (coils from
/// BART's dimension 3; the sample dimensions must be the trajectory's). Returns the coil count and the values.
pub fn samples_from_bart(
    ksp: &ArrayD<Complex64>,
    traj_shape: &[usize],
    source: &str,
) -> Result<(usize, Vec<Complex64>)> {
    let shape = ksp.shape();
    let sample_dims = traj_shape.get(1..).unwrap_or(&[]);
    let coils = shape.get(COIL_DIM).copied().unwrap_or(1);
    let matches = shape.first() == Some(&1)
        && (1..COIL_DIM).all(|d| shape.get(d).copied().unwrap_or(1) == sample_dims.get(d - 1).copied().unwrap_or(1))
        && sample_dims.iter().skip(COIL_DIM - 1).all(|&n| n == 1)
        && shape.iter().skip(COIL_DIM + 1).all(|&n| n == 1);
    if !matches {
        return Err(Error::invalid(
            "Nufft",
            format!(
                "{source}: non-Cartesian k-space {shape:?} does not match the trajectory {traj_shape:?}: BART's layout is \
                 [1, samples, spokes, coils] for a trajectory [3, samples, spokes]"
            ),
        ));
    }
    let points = ksp.len() / coils.max(1);
    let mut values = Vec::with_capacity(ksp.len());
    for c in 0..coils {
        for m in 0..points {
            let mut index =
                column_major_index(&[3, shape.get(1).copied().unwrap_or(1), shape.get(2).copied().unwrap_or(1)], m);
            index.resize(shape.len(), 0);
            if let Some(slot) = index.get_mut(COIL_DIM) {
                *slot = c;
            }
            values.push(ksp.get(index.as_slice()).copied().unwrap_or_default());
        }
    }
    Ok((coils, values))
}

/// The one BART dimension past the coils along which non-Cartesian k-space `ksp_shape` holds frames (`bart traj
/// -t`'s TIME, 10, or any other), with its extent; `None` when it has none. The trajectory `traj_shape` has that
/// extent there (a trajectory per frame) or 1 (one for every frame). Frames along two dimensions, or a trajectory
/// whose frames do not match, are refused naming `source`.
///
/// ```
/// use cliper::bart_frame_dim;
/// let mut ksp = vec![1, 64, 11, 4, 1, 1, 1, 1, 1, 1, 5];
/// assert_eq!(bart_frame_dim(&ksp, &[3, 64, 11, 1, 1, 1, 1, 1, 1, 1, 5], "k")?, Some((10, 5)));
/// assert_eq!(bart_frame_dim(&ksp, &[3, 64, 11], "k")?, Some((10, 5)));
/// assert!(bart_frame_dim(&ksp, &[3, 64, 11, 1, 1, 1, 1, 1, 1, 1, 4], "k").is_err());
/// ksp[5] = 2;
/// assert!(bart_frame_dim(&ksp, &[3, 64, 11], "k").is_err());
/// assert_eq!(bart_frame_dim(&[1, 64, 11, 4], &[3, 64, 11], "k")?, None);
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn bart_frame_dim(ksp_shape: &[usize], traj_shape: &[usize], source: &str) -> Result<Option<(usize, usize)>> {
    let dims: Vec<usize> = (COIL_DIM + 1..ksp_shape.len()).filter(|&d| ksp_shape.get(d) > Some(&1)).collect();
    let frame = match dims[..] {
        [] => return Ok(None),
        [d] => (d, ksp_shape.get(d).copied().unwrap_or(1)),
        _ => {
            return Err(Error::invalid(
                "Nufft",
                format!(
                    "{source}: k-space {ksp_shape:?} has frames along BART dimensions {dims:?}; one frame dimension                      is read (e.g. TIME, 10)"
                ),
            ));
        }
    };
    match traj_shape.get(frame.0).copied().unwrap_or(1) {
        1 => Ok(Some(frame)),
        n if n == frame.1 => Ok(Some(frame)),
        n => Err(Error::invalid(
            "Nufft",
            format!(
                "{source}: k-space {ksp_shape:?} has {} frames along dimension {} and the trajectory {traj_shape:?}                  {n}: give a trajectory per frame or one for all",
                frame.1, frame.0
            ),
        )),
    }
}

/// Frame `f` of a BART array along `frame` (as [`bart_frame_dim`] gives it), the dimension kept with extent 1;
/// index 0 where the array has extent 1 there (a trajectory every frame shares). Without frames, the array.
///
/// ```
/// use cliper::{bart_frame, ndarray::{ArrayD, IxDyn}};
/// use num_complex::Complex64 as C;
/// let a = ArrayD::from_shape_fn(IxDyn(&[2, 1, 3]), |i| C::new((i[0] + 10 * i[2]) as f64, 0.0));
/// assert_eq!(bart_frame(&a, Some((2, 3)), 1).iter().map(|v| v.re).collect::<Vec<_>>(), vec![10.0, 11.0]);
/// assert_eq!(bart_frame(&a, Some((5, 3)), 2).shape(), &[2, 1, 3]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn bart_frame(a: &ArrayD<Complex64>, frame: Option<(usize, usize)>, f: usize) -> ArrayD<Complex64> {
    match frame {
        Some((d, _)) if a.shape().get(d).is_some_and(|&n| n > 1) => {
            a.slice_axis(ndarray::Axis(d), ndarray::Slice::from(f..f + 1)).to_owned()
        }
        _ => a.clone(),
    }
}

/// `[coils, points]` values back in BART's layout `[1, samples, spokes, coils]` for a trajectory of `traj_shape`.
pub fn samples_to_bart(values: &[Complex64], coils: usize, traj_shape: &[usize]) -> Result<ArrayD<Complex64>> {
    let (s, p) = (traj_shape.get(1).copied().unwrap_or(1), traj_shape.get(2).copied().unwrap_or(1));
    let shape = [1, s, p, coils];
    let mut out = ArrayD::from_elem(ndarray::IxDyn(&shape), Complex64::new(0.0, 0.0));
    for (i, &v) in values.iter().enumerate() {
        let (c, m) = (i / (s * p).max(1), i % (s * p).max(1));
        if let Some(slot) = out.get_mut([0, m % s, m / s, c].as_slice()) {
            *slot = v;
        }
    }
    Ok(out)
}

/// Where image element `p` (row-major over the image's axes) sits in BART's `[x, y, z]`.
fn bart_position(p: usize, dims: &[usize; 3]) -> [usize; 3] {
    let mut at = [0usize; 3];
    let mut rest = p;
    for (slot, &n) in at.iter_mut().zip(dims).rev() {
        *slot = rest % n.max(1);
        rest /= n.max(1);
    }
    at
}

/// `[coils, image…]` values as BART's `[x, y, z, coils]`.
pub fn images_to_bart(images: &[Complex64], coils: usize, dims: &[usize; 3]) -> Result<ArrayD<Complex64>> {
    let image_len: usize = dims.iter().product();
    let mut out = ArrayD::from_elem(IxDyn(&[dims[0], dims[1], dims[2], coils]), Complex64::new(0.0, 0.0));
    for (i, v) in images.iter().enumerate() {
        let [x, y, z] = bart_position(i % image_len.max(1), dims);
        if let Some(slot) = out.get_mut([x, y, z, i / image_len.max(1)].as_slice()) {
            *slot = *v;
        }
    }
    Ok(out)
}

/// BART's images `[x, y, z, coils]` (x, y, z the dimensions `dims`) as `[coils, image…]` values.
pub fn images_from_bart(data: &ArrayD<Complex64>, dims: &[usize; 3], name: &str) -> Result<(usize, Vec<Complex64>)> {
    let s = data.shape();
    let leading: Vec<usize> = (0..3).map(|d| s.get(d).copied().unwrap_or(1)).collect();
    if leading != dims || s.iter().skip(4).any(|&n| n != 1) {
        return Err(Error::invalid(
            "Nufft",
            format!("{name}: image {s:?} is not [x, y, z, coils] with x:y:z = {}:{}:{}", dims[0], dims[1], dims[2]),
        ));
    }
    let batch = s.get(3).copied().unwrap_or(1);
    let image_len: usize = dims.iter().product();
    let mut values = Vec::with_capacity(batch * image_len);
    for c in 0..batch {
        for p in 0..image_len {
            let [x, y, z] = bart_position(p, dims);
            // The file's dimensions, trailing ones dropped: index only those.
            let mut at = vec![x, y, z, c];
            at.resize(s.len().max(4), 0);
            values.push(data.get(at.get(..s.len()).unwrap_or(&at)).copied().unwrap_or_default());
        }
    }
    Ok((batch, values))
}

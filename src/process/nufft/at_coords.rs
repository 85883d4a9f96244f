//! [`NufftAtCoords`]: the NUFFT of arrays at coordinates that are themselves an array on the device (SigPy's
//! `nufft(input, coord)` / `nufft_adjoint(input, coord, oshape)`), planned when the coordinates are read.

use super::nufft_params::NufftParams;
use super::nufft_transform::NufftDirection;
use super::points::NufftPoints;
use super::transform::{Nufft, NufftStrategy};
use crate::data::XData;
use crate::element::{ComplexElement, RealElement};
use crate::error::{Error, Result};
use crate::process::{Prepared, Process};

/// The type 2 (forward: image → points) or type 1 (adjoint: points → image) NUFFT at coordinates `coord`
/// `[points…, d]` (SigPy's layout: `coord[…, i]` is the frequency along the image's `i`-th of its last `d` axes, in
/// cycles per field of view, `[−N/2, N/2)`; BART's trajectory with its first axis moved last). Forward: `input`
/// `[batch…, N…]` to `output` `[batch…, points…]`; adjoint: the other way, `N` given. Scaling and signs are
/// [`Nufft`]'s (`bart nufft`'s, SigPy's): `y_m = (1/√ΠN) Σ_r x_r exp(−2πi k_m·r/N)`.
///
/// The coordinates are read back when the process launches (a pipeline may compute them), and the plan — the
/// kernel, the points sorted by bin — is made then and kept until they change.
///
/// ```
/// use cliper::{NufftAtCoords, NufftDirection, NufftParams, Process, XData};
/// use num_complex::Complex64 as C;
/// let app = cliper::ClApp::new()?;
/// // A delta at the centre of 8 × 6: its transform is 1/√48 at any frequency.
/// let mut x = vec![C::new(0.0, 0.0); 48];
/// x[4 * 6 + 3] = C::new(1.0, 0.0);
/// let x = XData::from_slice(&app, &[8, 6], &x)?;
/// let coord = XData::from_slice(&app, &[3, 2], &[0.0f64, 0.0, 1.5, -2.0, -3.25, 2.5])?;
/// let y = XData::zeros(&app, &[3])?;
/// NufftAtCoords::new(&x, &coord, &y, NufftDirection::Forward, NufftParams::default().tolerance(1e-9)).run()?;
/// assert!(y.to_vec()?.iter().all(|v| (v - C::new(48f64.sqrt().recip(), 0.0)).norm() < 1e-9));
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct NufftAtCoords<T: ComplexElement, C: RealElement> {
    input: XData<T>,
    coord: XData<C>,
    output: XData<T>,
    direction: NufftDirection,
    params: NufftParams,
    plan: Prepared<Planned<T>>,
}

/// The last plan and the coordinates it was made for.
struct Planned<T: ComplexElement> {
    coords: Vec<f64>,
    nufft: Option<Nufft<T>>,
    image: Vec<usize>,
    batch: usize,
}

impl<T: ComplexElement, C: RealElement> NufftAtCoords<T, C> {
    /// The transform of `input` at `coord` into `output` (shapes: [`NufftAtCoords::output_shape`]).
    pub fn new(
        input: &XData<T>,
        coord: &XData<C>,
        output: &XData<T>,
        direction: NufftDirection,
        params: NufftParams,
    ) -> NufftAtCoords<T, C> {
        NufftAtCoords {
            input: input.clone(),
            coord: coord.clone(),
            output: output.clone(),
            direction,
            params,
            plan: Prepared::default(),
        }
    }

    /// Allocates the output, transforms once and returns it (`image`: the image's sizes for the adjoint).
    pub fn apply(
        input: &XData<T>,
        coord: &XData<C>,
        direction: NufftDirection,
        image: &[usize],
        params: NufftParams,
    ) -> Result<XData<T>> {
        let shape = Self::output_shape(input.shape(), coord.shape(), direction, image)?;
        let output = XData::uninit(input.app(), "NufftAtCoords", &shape)?;
        NufftAtCoords::new(input, coord, &output, direction, params).run()?;
        Ok(output)
    }

    /// The plan made at the last launch (`None` before one).
    pub fn strategy(&self) -> Option<NufftStrategy> {
        self.plan.as_ref()?.nufft.as_ref().map(Nufft::strategy)
    }

    /// The output's shape for an input of `shape` and coordinates of `coord_shape` `[points…, d]`: forward,
    /// `[batch…, points…]` (the input's last `d` axes are the image; `image` unused); adjoint, `[batch…, image…]`
    /// with `image` the `d` sizes given (the input is `[batch…, points…]`).
    ///
    /// ```
    /// use cliper::{NufftAtCoords, NufftDirection::{Adjoint, Forward}};
    /// use num_complex::Complex32;
    /// type N = NufftAtCoords<Complex32, f32>;
    /// assert_eq!(N::output_shape(&[4, 64, 48], &[80, 41, 2], Forward, &[])?, vec![4, 80, 41]);
    /// assert_eq!(N::output_shape(&[4, 80, 41], &[80, 41, 2], Adjoint, &[64, 48])?, vec![4, 64, 48]);
    /// assert!(N::output_shape(&[4, 80, 40], &[80, 41, 2], Adjoint, &[64, 48]).is_err());
    /// assert!(N::output_shape(&[4, 80, 41], &[80, 41, 2], Adjoint, &[64]).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(
        shape: &[usize],
        coord_shape: &[usize],
        direction: NufftDirection,
        image: &[usize],
    ) -> Result<Vec<usize>> {
        let op = "NufftAtCoords";
        let Some((&dims, points)) = coord_shape.split_last().filter(|(d, _)| (1..=3).contains(*d)) else {
            return Err(Error::invalid(
                op,
                format!("coordinates {coord_shape:?}: the last axis holds 1 to 3 coordinates per point"),
            ));
        };
        let (from, to): (Vec<usize>, Vec<usize>) = match direction {
            NufftDirection::Forward if shape.len() >= dims => {
                (shape.get(shape.len() - dims..).unwrap_or_default().to_vec(), points.to_vec())
            }
            NufftDirection::Forward => {
                return Err(Error::invalid(op, format!("an input of {shape:?} for {dims} coordinates per point")));
            }
            NufftDirection::Adjoint if image.len() == dims => (points.to_vec(), image.to_vec()),
            NufftDirection::Adjoint => {
                return Err(Error::invalid(op, format!("an image of {image:?} for {dims} coordinates per point")));
            }
        };
        if !shape.ends_with(&from) {
            let what = if matches!(direction, NufftDirection::Forward) { "an image" } else { "values at the points" };
            return Err(Error::shape_rule(op, format!("{what} [batch…, {from:?}…]"), shape));
        }
        let batch = shape.get(..shape.len() - from.len()).unwrap_or_default();
        Ok(batch.iter().chain(&to).copied().collect())
    }

    /// The image `N` and the batch of the transform.
    fn image_and_batch(&self) -> (Vec<usize>, usize) {
        let dims = self.coord.shape().last().copied().unwrap_or(1);
        let image_side = match self.direction {
            NufftDirection::Forward => &self.input,
            NufftDirection::Adjoint => &self.output,
        };
        let shape = image_side.shape();
        let split = shape.len().saturating_sub(dims);
        (shape.get(split..).unwrap_or_default().to_vec(), shape.get(..split).unwrap_or_default().iter().product())
    }
}

impl<T: ComplexElement, C: RealElement> Process for NufftAtCoords<T, C> {
    fn name(&self) -> &str {
        "NufftAtCoords"
    }

    fn init(&mut self) -> Result<()> {
        let op = "NufftAtCoords";
        let (image, batch) = self.image_and_batch();
        let shape = Self::output_shape(self.input.shape(), self.coord.shape(), self.direction, &image)?;
        if self.output.shape() != shape.as_slice() {
            return Err(Error::shape(op, &shape, self.output.shape()));
        }
        if !self.output.is_packed() {
            return Err(Error::invalid(
                op,
                "the output must be contiguous from its buffer's start (XData::contiguous makes a copy)",
            ));
        }
        self.plan.set(Planned { coords: Vec::new(), nufft: None, image, batch });
        Ok(())
    }

    /// Reads the coordinates back (waits for the device), plans again when they changed, and enqueues the transform.
    fn launch(&mut self) -> Result<()> {
        let op = "NufftAtCoords";
        let coords: Vec<f64> = self.coord.to_vec()?.into_iter().map(|c| c.to_c64().re).collect();
        let (app, params) = (self.input.app().clone(), self.params);
        let plan = self.plan.get(op)?;
        if plan.nufft.is_none() || plan.coords != coords {
            let points = NufftPoints::named(&plan.image, coords.clone(), "the coordinates")?;
            plan.nufft = Some(Nufft::new(&app, &points, plan.batch, params)?);
            plan.coords = coords;
        }
        let nufft = plan.nufft.as_mut().ok_or_else(|| Error::NotInitialized { op: op.into() })?;
        let input = self.input.contiguous()?;
        // The plan's own shapes ([batch, points], [batch, N…]) over the same packed buffers.
        let (samples, image) = (nufft.points_shape(), nufft.image_shape());
        match self.direction {
            NufftDirection::Forward => nufft.forward(&input.reshape(&image)?, &self.output.reshape(&samples)?),
            NufftDirection::Adjoint => nufft.adjoint(&input.reshape(&samples)?, &self.output.reshape(&image)?),
        }
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

//! [`NufftTransform`]: a [`Nufft`] as a [`Process`] between two arrays, for pipelines, chains and the command line.

use super::nufft_params::NufftParams;
use super::points::NufftPoints;
use super::transform::{Nufft, NufftStrategy};
use crate::data::XData;
use crate::element::ComplexElement;
use crate::error::{Error, Result};
use crate::process::{Prepared, Process};

/// Which transform a [`NufftTransform`] applies.
///
/// ```
/// assert_eq!(cliper::NufftDirection::default(), cliper::NufftDirection::Forward);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NufftDirection {
    /// Type 2, image → points (`bart nufft`).
    #[default]
    Forward,
    /// Type 1, points → image, the adjoint (`bart nufft -a`).
    Adjoint,
}

/// The forward (type 2) or adjoint (type 1) NUFFT of `input` into `output` at fixed points: images
/// `[batch…, N…]` and point values `[batch…, points]` (any leading batch axes, the same on both sides; the
/// plan is made in `init`, so `launch` only enqueues).
///
/// ```
/// use cliper::{ClApp, NufftDirection, NufftParams, NufftPoints, NufftTransform, Process, XData};
/// use num_complex::Complex32 as C;
/// let app = ClApp::new()?;
/// let points = NufftPoints::new(&[6, 5], vec![0.0, 0.0, 1.0, -2.0])?;
/// // A constant image of ones: its transform at k = 0 is ΣΣ 1 / √30 = √30; at other integer k, 0.
/// let image = XData::from_slice(&app, &[6, 5], &[C::new(1.0, 0.0); 30])?;
/// let values = XData::zeros(&app, &[2])?;
/// NufftTransform::new(&image, &values, &points, NufftDirection::Forward, NufftParams::default()).run()?;
/// let v = values.to_vec()?;
/// assert!((v[0].re - 30f32.sqrt()).abs() < 1e-4 && v[1].norm() < 1e-4);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct NufftTransform<T: ComplexElement> {
    input: XData<T>,
    output: XData<T>,
    points: NufftPoints,
    direction: NufftDirection,
    params: NufftParams,
    plan: Prepared<Nufft<T>>,
}

impl<T: ComplexElement> NufftTransform<T> {
    /// The transform `direction` of `input` into `output` at `points`.
    pub fn new(
        input: &XData<T>,
        output: &XData<T>,
        points: &NufftPoints,
        direction: NufftDirection,
        params: NufftParams,
    ) -> NufftTransform<T> {
        NufftTransform {
            input: input.clone(),
            output: output.clone(),
            points: points.clone(),
            direction,
            params,
            plan: Prepared::default(),
        }
    }

    /// The output's shape for an input of `shape`: `[batch…, points]` forward, `[batch…, N…]` adjoint; an error
    /// when the input's trailing axes are not the image (forward) or the points (adjoint).
    ///
    /// ```
    /// use cliper::{NufftDirection, NufftPoints, NufftTransform};
    /// use num_complex::Complex32;
    /// let p = NufftPoints::new(&[8, 6], vec![0.0; 10])?;
    /// assert_eq!(NufftTransform::<Complex32>::output_shape(&[4, 8, 6], &p, NufftDirection::Forward)?, vec![4, 5]);
    /// assert_eq!(NufftTransform::<Complex32>::output_shape(&[4, 5], &p, NufftDirection::Adjoint)?, vec![4, 8, 6]);
    /// assert!(NufftTransform::<Complex32>::output_shape(&[6, 8], &p, NufftDirection::Forward).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize], points: &NufftPoints, direction: NufftDirection) -> Result<Vec<usize>> {
        let image = points.shape();
        let (tail, to): (Vec<usize>, Vec<usize>) = match direction {
            NufftDirection::Forward => (image.to_vec(), vec![points.len()]),
            NufftDirection::Adjoint => (vec![points.len()], image.to_vec()),
        };
        let Some(batch) = shape.len().checked_sub(tail.len()).and_then(|b| shape.get(..b)) else {
            return Err(Self::mismatch(shape, &tail, direction));
        };
        if shape.get(batch.len()..) != Some(&tail[..]) {
            return Err(Self::mismatch(shape, &tail, direction));
        }
        Ok(batch.iter().chain(&to).copied().collect())
    }

    fn mismatch(shape: &[usize], tail: &[usize], direction: NufftDirection) -> Error {
        let what = match direction {
            NufftDirection::Forward => "an image of the trajectory's image shape (with any batch axes before it)",
            NufftDirection::Adjoint => "one value per trajectory point (with any batch axes before them)",
        };
        Error::invalid("NufftTransform", format!("input {shape:?} must end in {tail:?}: {what}"))
    }

    /// Allocates the output, transforms `input` into it once and returns it.
    ///
    /// ```
    /// use cliper::{ClApp, NufftDirection, NufftParams, NufftPoints, NufftTransform, XData};
    /// use num_complex::Complex64 as C;
    /// let app = ClApp::new()?;
    /// let points = NufftPoints::new(&[4], vec![0.0])?;
    /// let x = XData::from_slice(&app, &[4], &[C::new(2.0, 0.0); 4])?;
    /// let y = NufftTransform::apply(&x, &points, NufftDirection::Forward, NufftParams::default())?;
    /// assert!((y.to_vec()?[0] - C::new(4.0, 0.0)).norm() < 1e-6); // Σ 2 / √4
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn apply(
        input: &XData<T>,
        points: &NufftPoints,
        direction: NufftDirection,
        params: NufftParams,
    ) -> Result<XData<T>> {
        let shape = Self::output_shape(input.shape(), points, direction)?;
        let out = XData::uninit(input.app(), "NufftTransform", &shape)?;
        NufftTransform::new(input, &out, points, direction, params).run()?;
        Ok(out)
    }

    /// The plan's [`Nufft`] (its kernel and fine grid); `None` before `init`.
    pub fn plan(&self) -> Option<&Nufft<T>> {
        self.plan.as_ref()
    }

    /// What the plan chose; `None` before `init`.
    pub fn strategy(&self) -> Option<NufftStrategy> {
        self.plan.as_ref().map(Nufft::strategy)
    }
}

impl<T: ComplexElement> Process for NufftTransform<T> {
    fn name(&self) -> &str {
        "NufftTransform"
    }

    fn init(&mut self) -> Result<()> {
        let out = Self::output_shape(self.input.shape(), &self.points, self.direction)?;
        if self.output.shape() != out {
            return Err(Error::shape("NufftTransform", &out, self.output.shape()));
        }
        let image_axes = self.points.shape().len();
        let batch_axes = match self.direction {
            NufftDirection::Forward => self.input.shape().len() - image_axes,
            NufftDirection::Adjoint => self.input.shape().len() - 1,
        };
        let batch: usize = self.input.shape().iter().take(batch_axes).product();
        self.plan.set(Nufft::new(self.input.app(), &self.points, batch, self.params)?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("NufftTransform")?;
        let (image, values) = (plan.image_shape(), plan.points_shape());
        match self.direction {
            NufftDirection::Forward => plan.forward(&self.input.reshape(&image)?, &self.output.reshape(&values)?),
            NufftDirection::Adjoint => plan.adjoint(&self.input.reshape(&values)?, &self.output.reshape(&image)?),
        }
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

//! [`MapCoordinates`]: scipy.ndimage.map_coordinates, one gather at coordinates given per output element.

use super::interp_plan::{Plan, Work, plan_gather};
use super::interpolation::{Interpolation, ResampleStrategy};
use super::spline_filter::Prefilter;
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::process::planning::array_view;
use crate::process::{Prepared, Process};

/// scipy.ndimage.map_coordinates: the input (up to three axes) interpolated at the coordinates given per output
/// element — `coordinates` has shape `[ndim, *output_shape]` (row `a` the coordinates along input axis `a`),
/// contiguous, of the input's real type. Order, mode, cval and prefilter as [`Interpolation`].
///
/// ```
/// use cliper::{ClApp, Interpolation, MapCoordinates, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[2, 2], &[0.0f64, 1.0, 2.0, 3.0])?;
/// let c = XData::from_slice(&app, &[2, 2], &[0.5, 1.0, 0.5, 0.0])?; // points (0.5, 0.5) and (1, 0)
/// let y = MapCoordinates::apply(&x, &c, Interpolation::new(1))?.to_vec()?;
/// assert_eq!(y, vec![1.5, 2.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct MapCoordinates<T: Element> {
    input: XData<T>,
    coordinates: XData<T::Real>,
    output: XData<T>,
    params: Interpolation,
    plan: Prepared<Plan<T>>,
}

impl<T: Element> MapCoordinates<T> {
    /// `output = map_coordinates(input, coordinates)`.
    pub fn new(
        input: &XData<T>,
        coordinates: &XData<T::Real>,
        output: &XData<T>,
        params: Interpolation,
    ) -> MapCoordinates<T> {
        MapCoordinates {
            input: input.clone(),
            coordinates: coordinates.clone(),
            output: output.clone(),
            params,
            plan: Prepared::default(),
        }
    }

    /// Allocates the output, runs once and returns it.
    pub fn apply(input: &XData<T>, coordinates: &XData<T::Real>, params: Interpolation) -> Result<XData<T>> {
        let shape = Self::output_shape(input.shape(), coordinates.shape(), &params)?;
        let out = XData::uninit(input.app(), "MapCoordinates", &shape)?;
        MapCoordinates::new(input, coordinates, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: the coordinates' without their first axis.
    ///
    /// ```
    /// use cliper::{Interpolation, MapCoordinates};
    /// assert_eq!(MapCoordinates::<f32>::output_shape(&[4, 5], &[2, 3, 7], &Interpolation::default())?, vec![3, 7]);
    /// assert!(MapCoordinates::<f32>::output_shape(&[4, 5], &[3, 7], &Interpolation::default()).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(input: &[usize], coordinates: &[usize], params: &Interpolation) -> Result<Vec<usize>> {
        let op = "map_coordinates";
        params.check(op)?;
        if input.is_empty() || input.len() > 3 {
            return Err(Error::Unsupported { what: format!("{op} of an input of {} axes (1 to 3)", input.len()) });
        }
        match coordinates.split_first() {
            Some((&n, rest)) if n == input.len() => Ok(rest.to_vec()),
            _ => Err(Error::invalid(
                op,
                format!(
                    "coordinates of shape {coordinates:?} for an input of shape {input:?}: the first axis must hold one \
                     row per input axis ({})",
                    input.len()
                ),
            )),
        }
    }

    /// What `init` planned; `None` before.
    pub fn strategy(&self) -> Option<ResampleStrategy> {
        self.plan.as_ref().map(|p| p.strategy.clone())
    }
}

impl<T: Element> Process for MapCoordinates<T> {
    fn name(&self) -> &str {
        "map_coordinates"
    }

    fn init(&mut self) -> Result<()> {
        let op = "map_coordinates";
        let out = Self::output_shape(self.input.shape(), self.coordinates.shape(), &self.params)?;
        if self.output.shape() != out.as_slice() {
            return Err(Error::shape(op, &out, self.output.shape()));
        }
        for (what, contiguous, shape) in [
            ("coordinates", self.coordinates.is_packed(), self.coordinates.shape()),
            ("output", self.output.is_packed(), self.output.shape()),
        ] {
            if !contiguous {
                return Err(Error::Unsupported {
                    what: format!(
                        "{op} with a strided {what} view of shape {shape:?}, or one at an offset into its buffer; make it contiguous first (XData::contiguous)"
                    ),
                });
            }
        }
        let interp = self.params;
        let rank = self.input.ndim();
        let count: usize = out.iter().product();
        let pass = [rank < 3, rank < 2, false];
        let slots: Vec<usize> = (4 - rank..4).collect();
        let order = if interp.prefilter { interp.order } else { 0 };
        let prefilter =
            Prefilter::plan(op, &self.input, rank, &slots, order, interp.mode, interp.pad(), interp.cval, None)?;
        // The output as one flat row.
        let flat = self.output.reshape(&[count])?;
        let target_view = array_view(op, &flat, 1)?;
        let gather = plan_gather(
            op,
            &prefilter.coefficients,
            &flat,
            target_view,
            rank,
            pass,
            [0.0; 12],
            Some((&self.coordinates, count)),
            &interp,
        )?;
        let index = gather.index;
        let strategy =
            ResampleStrategy::Gather { prefilter: prefilter.method(), axes: rank, double_coordinates: gather.double };
        let cval = T::from_c64(interp.cval);
        self.plan.set(Plan { prefilter, work: Work::Gather(Box::new(gather)), index, cval, strategy });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let mode = self.params.mode;
        self.plan.get("MapCoordinates")?.launch(mode)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

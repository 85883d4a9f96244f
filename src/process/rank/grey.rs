//! [`GreyMorphology`]: scipy.ndimage's grey_erosion, grey_dilation, grey_opening and grey_closing with flat
//! structuring elements (a size or a footprint), as the minimum and maximum filters they are — dilation with
//! scipy's reflected footprint and shifted origin, so that opening and closing are exactly scipy's.

use super::params::{Footprint, RankKind, RankParams};
use super::rank_filter::{RankFilter, RankStrategy};
use crate::data::XData;
use crate::element::RealElement;
use crate::error::{Error, Result};
use crate::process::filter::Border;
use crate::process::{Prepared, Process};

/// Which grey morphology operation.
///
/// ```
/// assert_eq!(cliper::GreyOp::Closing.name(), "grey_closing");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GreyOp {
    /// grey_erosion: the minimum under the footprint.
    Erosion,
    /// grey_dilation: the maximum under the reflected footprint.
    Dilation,
    /// grey_opening: erosion, then dilation.
    Opening,
    /// grey_closing: dilation, then erosion.
    Closing,
}

impl GreyOp {
    /// scipy's name.
    pub fn name(self) -> &'static str {
        match self {
            GreyOp::Erosion => "grey_erosion",
            GreyOp::Dilation => "grey_dilation",
            GreyOp::Opening => "grey_opening",
            GreyOp::Closing => "grey_closing",
        }
    }
}

/// The settings of a [`GreyMorphology`]: the operation and its flat structuring element — the window of a
/// [`RankParams`] (size, footprint, border, origin, axes; its kind is ignored).
///
/// ```
/// use cliper::{GreyOp, GreyParams};
/// let p = GreyParams::new(GreyOp::Opening).size(&[5]);
/// assert_eq!(p.window.size, vec![5]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct GreyParams {
    /// The operation.
    pub op: GreyOp,
    /// The structuring element and border.
    pub window: RankParams,
}

impl GreyParams {
    /// `op` with a 3-wide box, border `reflect`.
    pub fn new(op: GreyOp) -> GreyParams {
        GreyParams { op, window: RankParams::new(RankKind::Minimum) }
    }
    /// Sets the box's size (one, or one per axis).
    pub fn size(mut self, size: &[usize]) -> GreyParams {
        self.window = self.window.size(size);
        self
    }
    /// Sets the footprint.
    pub fn footprint(mut self, footprint: Footprint) -> GreyParams {
        self.window = self.window.footprint(footprint);
        self
    }
    /// Sets the border rule.
    pub fn border(mut self, border: Border) -> GreyParams {
        self.window = self.window.border(border);
        self
    }
    /// Sets the origin.
    pub fn origin(mut self, origin: &[isize]) -> GreyParams {
        self.window = self.window.origin(origin);
        self
    }
    /// Sets the axes spanned (the last `rank`).
    pub fn rank(mut self, rank: usize) -> GreyParams {
        self.window = self.window.rank(rank);
        self
    }

    /// The minimum filter of the erosion.
    fn erosion(&self) -> RankParams {
        RankParams { kind: RankKind::Minimum, ..self.window.clone() }
    }

    /// The maximum filter of the dilation: the footprint reflected, the origin negated and, along axes of even
    /// size, moved back by one (scipy's grey_dilation).
    fn dilation(&self, ndim: usize) -> Result<RankParams> {
        let window = self.window.window(ndim)?;
        let origin: Vec<isize> = window
            .shape
            .iter()
            .zip(&window.before)
            .map(|(&s, &b)| {
                let o = b - (s / 2) as isize;
                -o - isize::from(s % 2 == 0)
            })
            .collect();
        let footprint = self.window.footprint.as_ref().map(Footprint::reflected);
        Ok(RankParams {
            kind: RankKind::Maximum,
            footprint,
            size: window.shape.clone(),
            origin,
            rank: Some(window.rank),
            ..self.window.clone()
        })
    }
}

/// What a [`GreyMorphology`] runs: its rank filters in order (one, or two for opening and closing).
///
/// ```
/// use cliper::{ClApp, GreyMorphology, GreyOp, GreyParams, Process, RankStrategy, XData};
/// let app = ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[9, 9])?;
/// let mut p = GreyMorphology::new(&x, &XData::zeros(&app, &[9, 9])?, GreyParams::new(GreyOp::Opening).size(&[5]));
/// p.init()?;
/// assert_eq!(p.strategy().unwrap().filters, vec![RankStrategy::Separable { passes: 2 }; 2]);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GreyStrategy {
    /// Each filter's plan.
    pub filters: Vec<RankStrategy>,
}

impl std::fmt::Display for GreyStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.filters.iter().map(|s| s.to_string()).collect();
        write!(f, "{}", parts.join(", then "))
    }
}

/// Grey erosion, dilation, opening or closing of real data with a flat structuring element (scipy.ndimage's
/// functions with `size` or `footprint`; non-flat `structure` values are not offered).
///
/// ```
/// use cliper::{ClApp, GreyMorphology, GreyOp, GreyParams, XData};
/// let app = ClApp::new()?;
/// // A one-pixel spike is removed by an opening and kept by a closing.
/// let x = XData::from_slice(&app, &[1, 7], &[0.0f32, 0.0, 0.0, 5.0, 0.0, 0.0, 0.0])?;
/// let opened = GreyMorphology::apply(&x, GreyParams::new(GreyOp::Opening).size(&[3]).rank(1))?;
/// assert_eq!(opened.to_vec()?, vec![0.0; 7]);
/// let closed = GreyMorphology::apply(&x, GreyParams::new(GreyOp::Closing).size(&[3]).rank(1))?;
/// assert_eq!(closed.to_vec()?, vec![0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 0.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct GreyMorphology<T: RealElement> {
    input: XData<T>,
    output: XData<T>,
    params: GreyParams,
    plan: Prepared<Vec<RankFilter<T>>>,
}

impl<T: RealElement> GreyMorphology<T> {
    /// `output = op(input)`.
    pub fn new(input: &XData<T>, output: &XData<T>, params: GreyParams) -> GreyMorphology<T> {
        GreyMorphology { input: input.clone(), output: output.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the output, runs once and returns it.
    pub fn apply(input: &XData<T>, params: GreyParams) -> Result<XData<T>> {
        let out = XData::uninit(input.app(), "GreyMorphology", &Self::output_shape(input.shape(), &params)?)?;
        GreyMorphology::new(input, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: the input's.
    ///
    /// ```
    /// use cliper::{GreyMorphology, GreyOp, GreyParams};
    /// assert_eq!(GreyMorphology::<f32>::output_shape(&[6, 6], &GreyParams::new(GreyOp::Erosion))?, vec![6, 6]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(input: &[usize], params: &GreyParams) -> Result<Vec<usize>> {
        params.window.window(input.len())?;
        Ok(input.to_vec())
    }

    /// The rank filters `init` planned (one, or two for opening and closing); `None` before.
    pub fn strategy(&self) -> Option<GreyStrategy> {
        self.plan
            .as_ref()
            .map(|filters| GreyStrategy { filters: filters.iter().filter_map(RankFilter::strategy).collect() })
    }
}

impl<T: RealElement> Process for GreyMorphology<T> {
    fn name(&self) -> &str {
        self.params.op.name()
    }

    fn init(&mut self) -> Result<()> {
        let nd = self.input.ndim();
        let (erode, dilate) = (self.params.erosion(), self.params.dilation(nd)?);
        let steps = match self.params.op {
            GreyOp::Erosion => vec![erode],
            GreyOp::Dilation => vec![dilate],
            GreyOp::Opening => vec![erode, dilate],
            GreyOp::Closing => vec![dilate, erode],
        };
        if self.output.shape() != self.input.shape() {
            return Err(Error::Shape {
                op: self.name().into(),
                expected: format!("an output of the input's shape {:?}", self.input.shape()),
                got: format!("{:?}", self.output.shape()),
            });
        }
        let mut filters = Vec::with_capacity(steps.len());
        let mut source = self.input.clone();
        let last = steps.len().saturating_sub(1);
        for (k, params) in steps.into_iter().enumerate() {
            let target = if k == last {
                self.output.clone()
            } else {
                XData::uninit(self.input.app(), self.name(), self.input.shape())?
            };
            let mut f = RankFilter::new(&source, &target, params);
            f.init()?;
            filters.push(f);
            source = target;
        }
        self.plan.set(filters);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        for f in self.plan.get("GreyMorphology")?.iter_mut() {
            f.launch()?;
        }
        Ok(())
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

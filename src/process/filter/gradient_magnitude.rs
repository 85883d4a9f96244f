//! [`GradientMagnitude`]: scipy.ndimage's `gaussian_gradient_magnitude` and `generic_gradient_magnitude` with
//! `sobel`/`prewitt` (and Scharr's weights): one derivative convolution per axis into scratch arrays, then one
//! element-wise kernel `sqrt(Σ gₖ²)` — no host round trip, and no NormN-along-an-axis trick.

use super::border::Border;
use super::conv_params::{ConvMode, ConvParams};
use super::convolution::{ConvStrategy, Convolution};
use super::weights::Filter;
use crate::data::XData;
use crate::element::RealElement;
use crate::error::{Error, Result};
use crate::process::elementwise::{Elementwise, Expr, ExprStrategy};
use crate::process::{Prepared, Process};

/// The derivative a [`GradientMagnitude`] takes along each axis.
///
/// ```
/// use cliper::Derivative;
/// assert_eq!("gaussian:1.5".parse::<Derivative>()?, Derivative::Gaussian(vec![1.5]));
/// assert_eq!("sobel".parse::<Derivative>()?, Derivative::Sobel);
/// assert!("canny".parse::<Derivative>().is_err());
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Derivative {
    /// The Gaussian's first derivative (scipy.ndimage.gaussian_gradient_magnitude): one sigma for every axis, or
    /// one per axis (in voxels).
    Gaussian(Vec<f64>),
    /// scipy.ndimage.sobel.
    Sobel,
    /// scipy.ndimage.prewitt.
    Prewitt,
    /// Scharr's weights in Sobel's convention ([`Filter::scharr`]).
    Scharr,
}

impl std::str::FromStr for Derivative {
    type Err = Error;
    fn from_str(text: &str) -> Result<Derivative> {
        let t = text.trim().to_ascii_lowercase();
        match t.split_once(':') {
            Some(("gaussian", sigmas)) => {
                let values: Vec<f64> = sigmas
                    .split(',')
                    .map(|v| {
                        v.trim().parse::<f64>().map_err(|_| {
                            Error::invalid("derivative", format!("`{v}` in `{text}` is not a sigma (a number)"))
                        })
                    })
                    .collect::<Result<_>>()?;
                Ok(Derivative::Gaussian(values))
            }
            None if t == "sobel" => Ok(Derivative::Sobel),
            None if t == "prewitt" => Ok(Derivative::Prewitt),
            None if t == "scharr" => Ok(Derivative::Scharr),
            _ => Err(Error::invalid(
                "derivative",
                format!("`{text}` is not a derivative: give sobel, prewitt, scharr or gaussian:SIGMA"),
            )),
        }
    }
}

/// The settings of a [`GradientMagnitude`]: the derivative (default Sobel), scipy's border mode (default
/// `reflect`, which is [`Border::Reflect`]) and the axes it spans (the last `rank`, default all up to three).
///
/// ```
/// use cliper::{Border, Derivative, GradientParams};
/// let p = GradientParams::default().derivative(Derivative::Gaussian(vec![2.0])).border(Border::Nearest).rank(2);
/// assert_eq!(p.rank, Some(2));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct GradientParams {
    /// The derivative along each axis.
    pub derivative: Derivative,
    /// The border rule (scipy's `mode`: `Border::scipy("reflect")` is the default).
    pub border: Border,
    /// The axes the gradient spans, the last ones (`None`: all, up to three).
    pub rank: Option<usize>,
}

impl Default for GradientParams {
    fn default() -> GradientParams {
        GradientParams { derivative: Derivative::Sobel, border: Border::Reflect, rank: None }
    }
}

impl GradientParams {
    /// Sets the derivative.
    pub fn derivative(mut self, derivative: Derivative) -> GradientParams {
        self.derivative = derivative;
        self
    }
    /// Sets the border rule.
    pub fn border(mut self, border: Border) -> GradientParams {
        self.border = border;
        self
    }
    /// Sets the axes spanned (the last `rank`).
    pub fn rank(mut self, rank: usize) -> GradientParams {
        self.rank = Some(rank);
        self
    }
}

/// What a [`GradientMagnitude`] runs: one convolution per axis, then the magnitude kernel.
///
/// ```
/// use cliper::{ClApp, GradientMagnitude, GradientParams, Process, XData};
/// let app = ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[20, 30])?;
/// let y = XData::<f32>::zeros(&app, &[20, 30])?;
/// let mut p = GradientMagnitude::new(&x, &y, GradientParams::default());
/// p.init()?;
/// assert_eq!(p.strategy().unwrap().convolutions.len(), 2);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct GradientStrategy {
    /// Each axis's derivative convolution.
    pub convolutions: Vec<ConvStrategy>,
    /// The kernel combining them.
    pub magnitude: ExprStrategy,
}

impl std::fmt::Display for GradientStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let convs: Vec<String> = self.convolutions.iter().map(|c| c.to_string()).collect();
        write!(f, "derivatives [{}], then {}", convs.join("; "), self.magnitude)
    }
}

/// The gradient magnitude `sqrt(Σₖ (∂ₖ x)²)` over the last `rank` axes, each derivative the chosen filter
/// along axis k (scipy.ndimage.gaussian_gradient_magnitude for [`Derivative::Gaussian`],
/// generic_gradient_magnitude with sobel/prewitt for the others). Real data; `out` has the input's shape.
///
/// ```
/// use cliper::{ClApp, Derivative, GradientMagnitude, GradientParams, XData};
/// let app = ClApp::new()?;
/// // A ramp rising by 2 per column: Sobel's x-derivative is 2·2·4 = 16 inside, the y-derivative 0.
/// let ramp: Vec<f64> = (0..6 * 7).map(|i| 2.0 * (i % 7) as f64).collect();
/// let x = XData::from_slice(&app, &[6, 7], &ramp)?;
/// let g = GradientMagnitude::apply(&x, GradientParams::default())?;
/// assert_eq!(g.to_vec()?[7 * 3 + 3], 16.0);
/// let gg = GradientMagnitude::apply(&x, GradientParams::default().derivative(Derivative::Gaussian(vec![1.0])))?;
/// assert!((gg.to_vec()?[7 * 3 + 3] - 2.0).abs() < 0.05); // the Gaussian derivative is the slope itself
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct GradientMagnitude<T: RealElement> {
    input: XData<T>,
    output: XData<T>,
    params: GradientParams,
    plan: Prepared<Stages<T>>,
}

struct Stages<T: RealElement> {
    derivatives: Vec<Convolution<T, T>>,
    magnitude: Elementwise<T, T>,
}

impl<T: RealElement> GradientMagnitude<T> {
    /// `output = |∇ input|`.
    pub fn new(input: &XData<T>, output: &XData<T>, params: GradientParams) -> GradientMagnitude<T> {
        GradientMagnitude { input: input.clone(), output: output.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the output, computes the gradient magnitude into it once and returns it.
    pub fn apply(input: &XData<T>, params: GradientParams) -> Result<XData<T>> {
        let out = XData::uninit(input.app(), "GradientMagnitude", &Self::output_shape(input.shape())?)?;
        GradientMagnitude::new(input, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: the input's.
    ///
    /// ```
    /// assert_eq!(cliper::GradientMagnitude::<f32>::output_shape(&[4, 5])?, vec![4, 5]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(input: &[usize]) -> Result<Vec<usize>> {
        Ok(input.to_vec())
    }

    /// What `init` planned; `None` before.
    pub fn strategy(&self) -> Option<GradientStrategy> {
        self.plan.as_ref().map(|s| GradientStrategy {
            convolutions: s.derivatives.iter().filter_map(|c| c.strategy()).collect(),
            magnitude: s.magnitude.strategy().unwrap_or(ExprStrategy::Nothing),
        })
    }

    /// The filter differentiating along axis `axis` of `rank`.
    fn filter(&self, axis: usize, rank: usize) -> Result<Filter<T>> {
        match &self.params.derivative {
            Derivative::Sobel => Filter::sobel(axis, rank),
            Derivative::Prewitt => Filter::prewitt(axis, rank),
            Derivative::Scharr => Filter::scharr(axis, rank),
            Derivative::Gaussian(sigmas) => {
                let sigmas = match sigmas.as_slice() {
                    [one] => vec![*one; rank],
                    many if many.len() == rank => many.to_vec(),
                    many => {
                        return Err(Error::invalid(
                            "GradientMagnitude",
                            format!(
                                "gives {} sigmas for a gradient over {rank} axes: give one, or one per axis",
                                many.len()
                            ),
                        ));
                    }
                };
                let orders: Vec<usize> = (0..rank).map(|a| usize::from(a == axis)).collect();
                Filter::gaussian_derivative(&sigmas, &orders)
            }
        }
    }
}

impl<T: RealElement> Process for GradientMagnitude<T> {
    fn name(&self) -> &str {
        "GradientMagnitude"
    }

    fn init(&mut self) -> Result<()> {
        let nd = self.input.ndim();
        let rank = self.params.rank.unwrap_or(nd.min(3));
        if !(1..=3).contains(&rank) || rank > nd {
            return Err(Error::invalid(
                self.name(),
                format!("spans 1 to 3 of the input's axes; asked for {rank} of shape {:?}", self.input.shape()),
            ));
        }
        if self.output.shape() != self.input.shape() {
            return Err(Error::shape_because(
                self.name(),
                self.input.shape(),
                self.output.shape(),
                "the input's shape",
            ));
        }
        let conv = ConvParams::default().border(self.params.border).mode(ConvMode::Correlation);
        let mut derivatives = Vec::with_capacity(rank);
        let mut scratch = Vec::with_capacity(rank);
        for axis in 0..rank {
            let g = XData::uninit(self.input.app(), "GradientMagnitude", self.input.shape())?;
            let mut c = Convolution::new(&self.input, &self.filter(axis, rank)?, &g, conv.clone());
            c.init()?;
            derivatives.push(c);
            scratch.push(g);
        }
        let refs: Vec<&XData<T>> = scratch.iter().collect();
        let mut magnitude = Elementwise::new(&refs, &self.output, Expr::magnitude(rank));
        magnitude.init()?;
        self.plan.set(Stages { derivatives, magnitude });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let stages = self.plan.get("GradientMagnitude")?;
        for c in &mut stages.derivatives {
            c.launch()?;
        }
        stages.magnitude.launch()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

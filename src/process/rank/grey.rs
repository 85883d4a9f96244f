//! [`GreyMorphology`]: scipy.ndimage's grey_erosion, grey_dilation, grey_opening, grey_closing,
//! morphological_gradient, morphological_laplace, white_tophat and black_tophat, with flat structuring elements
//! (a size or a footprint) or non-flat ones (`structure` values), as the minimum and maximum filters they are —
//! dilation with scipy's reflected footprint and structure and its shifted origin, so that every composition is
//! exactly scipy's — and one element-wise kernel for the differences.

use super::params::{Footprint, RankKind, RankParams};
use super::rank_filter::{RankFilter, RankStrategy};
use crate::data::XData;
use crate::element::RealElement;
use crate::error::{Error, Result};
use crate::process::elementwise::{Elementwise, Expr};
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
    /// morphological_gradient: dilation − erosion.
    Gradient,
    /// morphological_laplace: dilation + erosion − 2·input.
    Laplace,
    /// white_tophat: input − opening.
    WhiteTophat,
    /// black_tophat: closing − input.
    BlackTophat,
}

impl GreyOp {
    /// scipy's name.
    pub fn name(self) -> &'static str {
        match self {
            GreyOp::Erosion => "grey_erosion",
            GreyOp::Dilation => "grey_dilation",
            GreyOp::Opening => "grey_opening",
            GreyOp::Closing => "grey_closing",
            GreyOp::Gradient => "morphological_gradient",
            GreyOp::Laplace => "morphological_laplace",
            GreyOp::WhiteTophat => "white_tophat",
            GreyOp::BlackTophat => "black_tophat",
        }
    }
}

/// The settings of a [`GreyMorphology`]: the operation and its structuring element — the window of a
/// [`RankParams`] (size, footprint, non-flat `structure` values, border, origin, axes; its kind is ignored).
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
    /// Sets a non-flat structuring element: values row-major over `shape` (scipy's `structure`; the footprint is
    /// its box unless one is set).
    ///
    /// ```
    /// use cliper::{GreyOp, GreyParams};
    /// let p = GreyParams::new(GreyOp::Dilation).structure(&[3], &[0.0, 1.0, 0.0])?;
    /// assert_eq!(p.window.structure, Some(vec![0.0, 1.0, 0.0]));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn structure(mut self, shape: &[usize], values: &[f64]) -> Result<GreyParams> {
        self.window = self.window.structure(shape, values)?;
        Ok(self)
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
        // The structure reflected with the footprint: its row-major values reversed.
        let structure = self.window.structure.as_ref().map(|v| v.iter().rev().copied().collect());
        Ok(RankParams {
            kind: RankKind::Maximum,
            footprint,
            structure,
            size: window.shape.clone(),
            origin,
            rank: Some(window.rank),
            ..self.window.clone()
        })
    }
}

/// What a [`GreyMorphology`] runs: its rank filters in order (one, or two), and the element-wise combination
/// that follows (gradient, laplace, top-hats).
///
/// ```
/// use cliper::{ClApp, GreyMorphology, GreyOp, GreyParams, Process, RankStrategy, XData};
/// let app = ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[9, 9])?;
/// let mut p = GreyMorphology::new(&x, &XData::zeros(&app, &[9, 9])?, GreyParams::new(GreyOp::Opening).size(&[5]));
/// p.init()?;
/// assert_eq!(p.strategy().unwrap().filters, vec![RankStrategy::Separable { passes: 2 }; 2]);
/// assert_eq!(p.strategy().unwrap().combination, None);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GreyStrategy {
    /// Each filter's plan.
    pub filters: Vec<RankStrategy>,
    /// The element-wise step after them (`dilation − erosion`, …), if any.
    pub combination: Option<&'static str>,
}

impl std::fmt::Display for GreyStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts: Vec<String> = self.filters.iter().map(|s| s.to_string()).collect();
        if let Some(c) = self.combination {
            parts.push(c.to_string());
        }
        write!(f, "{}", parts.join(", then "))
    }
}

/// Grey morphology of real data (scipy.ndimage's grey_erosion, grey_dilation, grey_opening, grey_closing,
/// morphological_gradient, morphological_laplace, white_tophat, black_tophat) with a flat structuring element
/// (`size` or `footprint`) or a non-flat one (`structure`): exact, as scipy computes it in the data's type.
///
/// ```
/// use cliper::{ClApp, GreyMorphology, GreyOp, GreyParams, XData};
/// let app = ClApp::new()?;
/// // A one-pixel spike is removed by an opening and kept by a closing; the white top-hat keeps only it.
/// let x = XData::from_slice(&app, &[1, 7], &[0.0f32, 0.0, 0.0, 5.0, 0.0, 0.0, 0.0])?;
/// let opened = GreyMorphology::apply(&x, GreyParams::new(GreyOp::Opening).size(&[3]).rank(1))?;
/// assert_eq!(opened.to_vec()?, vec![0.0; 7]);
/// let closed = GreyMorphology::apply(&x, GreyParams::new(GreyOp::Closing).size(&[3]).rank(1))?;
/// assert_eq!(closed.to_vec()?, vec![0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 0.0]);
/// let hat = GreyMorphology::apply(&x, GreyParams::new(GreyOp::WhiteTophat).size(&[3]).rank(1))?;
/// assert_eq!(hat.to_vec()?, vec![0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 0.0]);
/// // A non-flat structure adds its values: the dilation of the spike by [0, 1, 0] lifts the spike's own tap.
/// let ridge = GreyParams::new(GreyOp::Dilation).structure(&[3], &[0.0, 1.0, 0.0])?.rank(1);
/// assert_eq!(GreyMorphology::apply(&x, ridge)?.to_vec()?, vec![1.0, 1.0, 5.0, 6.0, 5.0, 1.0, 1.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct GreyMorphology<T: RealElement> {
    input: XData<T>,
    output: XData<T>,
    params: GreyParams,
    plan: Prepared<Plan<T>>,
}

/// One filter of the plan: its params, its source (`None`: the previous filter's target) and its target.
type Step<T> = (RankParams, Option<XData<T>>, XData<T>);

struct Plan<T: RealElement> {
    filters: Vec<RankFilter<T>>,
    combine: Option<Elementwise<T, T>>,
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

    /// The rank filters `init` planned and the combination after them; `None` before.
    pub fn strategy(&self) -> Option<GreyStrategy> {
        self.plan.as_ref().map(|p| GreyStrategy {
            filters: p.filters.iter().filter_map(RankFilter::strategy).collect(),
            combination: combination(self.params.op).map(|(text, _)| text),
        })
    }
}

/// The element-wise step after the filters, and its expression over (first result, second result, input).
fn combination(op: GreyOp) -> Option<(&'static str, Expr)> {
    let (a, b, x) = (Expr::input(0), Expr::input(1), Expr::input(2));
    match op {
        GreyOp::Gradient => Some(("dilation − erosion", a - b)),
        // scipy: (dilation + erosion) − input − input.
        GreyOp::Laplace => Some(("dilation + erosion − 2·input", a + b - x.clone() - x)),
        GreyOp::WhiteTophat => Some(("input − opening", x - b)),
        GreyOp::BlackTophat => Some(("closing − input", b - x)),
        _ => None,
    }
}

impl<T: RealElement> Process for GreyMorphology<T> {
    fn name(&self) -> &str {
        self.params.op.name()
    }

    fn init(&mut self) -> Result<()> {
        let nd = self.input.ndim();
        let (erode, dilate) = (self.params.erosion(), self.params.dilation(nd)?);
        if self.output.shape() != self.input.shape() {
            return Err(Error::shape_because(
                self.name(),
                self.input.shape(),
                self.output.shape(),
                "the input's shape",
            ));
        }
        let app = self.input.app().clone();
        let scratch = || XData::<T>::uninit(&app, self.params.op.name(), self.input.shape());
        let x = self.input.clone();
        let out = self.output.clone();
        // (params, source, target) per filter: `None` as source is the previous filter's target.
        let (steps, first, second): (Vec<Step<T>>, _, _) = match self.params.op {
            GreyOp::Erosion => (vec![(erode, Some(x.clone()), out.clone())], None, None),
            GreyOp::Dilation => (vec![(dilate, Some(x.clone()), out.clone())], None, None),
            GreyOp::Opening => (vec![(erode, Some(x.clone()), scratch()?), (dilate, None, out.clone())], None, None),
            GreyOp::Closing => (vec![(dilate, Some(x.clone()), scratch()?), (erode, None, out.clone())], None, None),
            GreyOp::Gradient | GreyOp::Laplace => {
                let (a, b) = (scratch()?, scratch()?);
                (vec![(dilate, Some(x.clone()), a.clone()), (erode, Some(x.clone()), b.clone())], Some(a), Some(b))
            }
            GreyOp::WhiteTophat => {
                let (a, b) = (scratch()?, scratch()?);
                (vec![(erode, Some(x.clone()), a.clone()), (dilate, None, b.clone())], Some(a), Some(b))
            }
            GreyOp::BlackTophat => {
                let (a, b) = (scratch()?, scratch()?);
                (vec![(dilate, Some(x.clone()), a.clone()), (erode, None, b.clone())], Some(a), Some(b))
            }
        };
        let mut filters = Vec::with_capacity(steps.len());
        let mut previous = x.clone();
        for (params, source, target) in steps {
            let source = source.unwrap_or(previous);
            let mut f = RankFilter::new(&source, &target, params);
            f.init()?;
            filters.push(f);
            previous = target;
        }
        let combine = match (combination(self.params.op), first, second) {
            (Some((_, expr)), Some(a), Some(b)) => {
                let mut e = Elementwise::new(&[&a, &b, &x], &out, expr);
                e.init()?;
                Some(e)
            }
            _ => None,
        };
        self.plan.set(Plan { filters, combine });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("GreyMorphology")?;
        for f in plan.filters.iter_mut() {
            f.launch()?;
        }
        if let Some(c) = plan.combine.as_mut() {
            c.launch()?;
        }
        Ok(())
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

impl std::str::FromStr for GreyOp {
    type Err = Error;
    /// `erosion`, `dilation`, `opening`, `closing`, `gradient`, `laplace`, `white-tophat`, `black-tophat` (scipy's
    /// names work too: `morphological_gradient`, `white_tophat`, …).
    ///
    /// ```
    /// assert_eq!("white_tophat".parse::<cliper::GreyOp>()?, cliper::GreyOp::WhiteTophat);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    fn from_str(operation: &str) -> Result<GreyOp> {
        match operation.trim().to_ascii_lowercase().as_str() {
            "erosion" => Ok(GreyOp::Erosion),
            "dilation" => Ok(GreyOp::Dilation),
            "opening" => Ok(GreyOp::Opening),
            "closing" => Ok(GreyOp::Closing),
            "gradient" | "morphological-gradient" | "morphological_gradient" => Ok(GreyOp::Gradient),
            "laplace" | "morphological-laplace" | "morphological_laplace" => Ok(GreyOp::Laplace),
            "white-tophat" | "white_tophat" => Ok(GreyOp::WhiteTophat),
            "black-tophat" | "black_tophat" => Ok(GreyOp::BlackTophat),
            _ => Err(Error::invalid(
                "grey-morphology",
                format!(
                    "`{operation}` is not an operation: give erosion, dilation, opening, closing, gradient, laplace, \
                     white-tophat or black-tophat"
                ),
            )),
        }
    }
}

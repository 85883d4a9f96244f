//! [`BinaryMorphology`]: binary erosion, dilation, opening and closing as scipy.ndimage computes them.

use crate::data::XData;
use crate::element::RealElement;
use crate::error::{Error, Result};
use crate::process::elementwise::{BinaryOp as ExprOp, Elementwise, Expr};
use crate::process::filter::Border;
use crate::process::rank::{Footprint, RankFilter, RankKind, RankParams, RankStrategy};
use crate::process::{Prepared, Process};

/// Which binary morphology operation.
///
/// ```
/// assert_eq!(cliper::MorphologyOp::Opening.name(), "binary_opening");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MorphologyOp {
    /// binary_erosion: 1 where the structure placed on the element lies wholly on non-zero elements.
    Erosion,
    /// binary_dilation: 1 where the reflected structure placed on the element meets a non-zero element.
    Dilation,
    /// binary_opening: erosion, then dilation (each `iterations` times).
    Opening,
    /// binary_closing: dilation, then erosion.
    Closing,
}

impl MorphologyOp {
    /// scipy's name.
    pub fn name(self) -> &'static str {
        match self {
            MorphologyOp::Erosion => "binary_erosion",
            MorphologyOp::Dilation => "binary_dilation",
            MorphologyOp::Opening => "binary_opening",
            MorphologyOp::Closing => "binary_closing",
        }
    }
}

/// The settings of a [`BinaryMorphology`], scipy's defaults: the structure `generate_binary_structure(rank, 1)`
/// (the cross: [`BinaryParams::connectivity`] widens it), one iteration (`0`: repeat until nothing changes),
/// border value 0, origin 0, over the last `rank` axes (default every axis up to three).
///
/// ```
/// use cliper::{MorphologyOp, BinaryParams};
/// let p = BinaryParams::new(MorphologyOp::Erosion).iterations(3).connectivity(2).border_value(true);
/// assert_eq!((p.iterations, p.connectivity, p.border_value), (3, 2, true));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct BinaryParams {
    /// The operation.
    pub op: MorphologyOp,
    /// The structuring element (overrides `connectivity`).
    pub structure: Option<Footprint>,
    /// scipy's generate_binary_structure(rank, connectivity) when no structure is given: 1 (the cross) to rank.
    pub connectivity: usize,
    /// Repetitions of each step; 0 repeats until nothing changes.
    pub iterations: usize,
    /// The value outside the array.
    pub border_value: bool,
    /// The structure's shift (scipy's `origin`): one, or one per axis.
    pub origin: Vec<isize>,
    /// Axes spanned, the last ones.
    pub rank: Option<usize>,
}

impl BinaryParams {
    /// `op` with scipy's defaults.
    pub fn new(op: MorphologyOp) -> BinaryParams {
        BinaryParams {
            op,
            structure: None,
            connectivity: 1,
            iterations: 1,
            border_value: false,
            origin: vec![0],
            rank: None,
        }
    }
    /// Sets the structure.
    pub fn structure(mut self, structure: Footprint) -> BinaryParams {
        self.structure = Some(structure);
        self
    }
    /// Sets the connectivity of the default structure.
    pub fn connectivity(mut self, connectivity: usize) -> BinaryParams {
        self.connectivity = connectivity;
        self
    }
    /// Sets the repetitions (0: until nothing changes).
    pub fn iterations(mut self, iterations: usize) -> BinaryParams {
        self.iterations = iterations;
        self
    }
    /// Sets the value outside the array.
    pub fn border_value(mut self, value: bool) -> BinaryParams {
        self.border_value = value;
        self
    }
    /// Sets the origin.
    pub fn origin(mut self, origin: &[isize]) -> BinaryParams {
        self.origin = origin.to_vec();
        self
    }
    /// Sets the axes spanned.
    pub fn rank(mut self, rank: usize) -> BinaryParams {
        self.rank = Some(rank);
        self
    }

    /// The structure on `rank` axes: the given one, or scipy's generate_binary_structure(rank, connectivity)
    /// (the elements within `connectivity` unit steps of the centre of a 3^rank box).
    fn structure_for(&self, rank: usize) -> Result<Footprint> {
        if let Some(s) = &self.structure {
            return Ok(s.clone());
        }
        Footprint::binary_structure(rank, self.connectivity).map_err(|_| {
            Error::invalid(
                self.op.name(),
                format!("connectivity {} is not within 1 to {rank} (the axes filtered)", self.connectivity),
            )
        })
    }

    /// The minimum (erosion) or maximum (dilation) filter of one step on an array of `ndim` axes; dilation
    /// reflects the structure and negates the origin, moving it back by one along even axes (scipy's rule).
    fn step(&self, dilate: bool, ndim: usize) -> Result<RankParams> {
        let rank = self.rank.unwrap_or_else(|| self.structure.as_ref().map_or(ndim.min(3), |s| s.shape().len()));
        let structure = self.structure_for(rank)?;
        let border = Border::Constant(if self.border_value { 1.0 } else { 0.0 });
        let base = RankParams::new(if dilate { RankKind::Maximum } else { RankKind::Minimum })
            .border(border)
            .rank(rank)
            .origin(&self.origin);
        if !dilate {
            return Ok(base.footprint(structure));
        }
        let origins: Vec<isize> = match self.origin.as_slice() {
            [one] => vec![*one; rank],
            many => many.to_vec(),
        };
        let origin: Vec<isize> = structure
            .shape()
            .iter()
            .zip(origins.iter().chain(std::iter::repeat(&0)))
            .map(|(&s, &o)| -o - isize::from(s % 2 == 0))
            .collect();
        Ok(base.footprint(structure.reflected()).origin(&origin))
    }
}

/// What a [`BinaryMorphology`] runs: the 0/1 kernel, then its filters (each step × iterations).
///
/// ```
/// use cliper::{BinaryMorphology, MorphologyOp, BinaryParams, ClApp, Process, XData};
/// let app = ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[8, 9])?;
/// let mut p = BinaryMorphology::new(&x, &XData::zeros(&app, &[8, 9])?, BinaryParams::new(MorphologyOp::Opening).iterations(2));
/// p.init()?;
/// assert_eq!(p.strategy().unwrap().filters.len(), 4);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinaryStrategy {
    /// The filters, in order.
    pub filters: Vec<RankStrategy>,
}

impl std::fmt::Display for BinaryStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.filters.first() {
            Some(first) => write!(f, "0/1, then {} filter(s): {first}, …", self.filters.len()),
            None => write!(f, "none"),
        }
    }
}

/// Binary erosion, dilation, opening or closing of real data (non-zero = true) into 0/1 values of the same type,
/// equal to scipy.ndimage's functions of those names (structure, iterations, border_value, origin).
///
/// ```
/// use cliper::{BinaryMorphology, MorphologyOp, BinaryParams, ClApp, XData};
/// let app = ClApp::new()?;
/// // A 3×3 square of 5s in a 5×5 zero image: eroded by the cross to its centre, dilated to a 5×5 plus sign.
/// let mut v = vec![0.0f32; 25];
/// for r in 1..4 { for c in 1..4 { v[r * 5 + c] = 5.0; } }
/// let x = XData::from_slice(&app, &[5, 5], &v)?;
/// let e = BinaryMorphology::apply(&x, BinaryParams::new(MorphologyOp::Erosion))?.to_vec()?;
/// assert_eq!(e.iter().sum::<f32>(), 1.0);
/// assert_eq!(e[12], 1.0);
/// let d = BinaryMorphology::apply(&x, BinaryParams::new(MorphologyOp::Dilation))?.to_vec()?;
/// assert_eq!(d.iter().sum::<f32>(), 21.0);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct BinaryMorphology<T: RealElement> {
    input: XData<T>,
    output: XData<T>,
    params: BinaryParams,
    plan: Prepared<Steps<T>>,
}

/// What `init` made: the 0/1 kernel and the filters, in order.
struct Steps<T: RealElement> {
    binarize: Elementwise<T, T>,
    filters: Vec<RankFilter<T>>,
}

impl<T: RealElement> BinaryMorphology<T> {
    /// `output = op(input != 0)`, as 0 and 1.
    pub fn new(input: &XData<T>, output: &XData<T>, params: BinaryParams) -> BinaryMorphology<T> {
        BinaryMorphology { input: input.clone(), output: output.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the output, runs once and returns it.
    pub fn apply(input: &XData<T>, params: BinaryParams) -> Result<XData<T>> {
        let out = XData::uninit(input.app(), "BinaryMorphology", &Self::output_shape(input.shape(), &params)?)?;
        BinaryMorphology::new(input, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: the input's (after checking the structure against it).
    ///
    /// ```
    /// use cliper::{BinaryMorphology, MorphologyOp, BinaryParams};
    /// assert_eq!(BinaryMorphology::<f32>::output_shape(&[6, 7], &BinaryParams::new(MorphologyOp::Closing))?, vec![6, 7]);
    /// let e = BinaryMorphology::<f32>::output_shape(&[6, 7], &BinaryParams::new(MorphologyOp::Erosion).connectivity(3));
    /// assert!(e.unwrap_err().to_string().contains("connectivity 3 is not within 1 to 2"));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(input: &[usize], params: &BinaryParams) -> Result<Vec<usize>> {
        params.step(false, input.len())?.window(input.len())?;
        params.step(true, input.len())?.window(input.len())?;
        Ok(input.to_vec())
    }

    /// What `init` planned; `None` before.
    pub fn strategy(&self) -> Option<BinaryStrategy> {
        self.plan
            .as_ref()
            .map(|s| BinaryStrategy { filters: s.filters.iter().filter_map(RankFilter::strategy).collect() })
    }
}

impl<T: RealElement> Process for BinaryMorphology<T> {
    fn name(&self) -> &str {
        self.params.op.name()
    }

    fn init(&mut self) -> Result<()> {
        let shape = self.input.shape().to_vec();
        if self.output.shape() != shape.as_slice() {
            return Err(Error::shape_because(self.name(), &shape, self.output.shape(), "the input's shape"));
        }
        let nd = shape.len();
        let (erode, dilate) = (self.params.step(false, nd)?, self.params.step(true, nd)?);
        // 0 iterations: until nothing changes. Each step that changes something moves the boundary by one
        // element, so the sum of the extents bounds the steps that can change anything; later ones are the
        // identity.
        let times =
            if self.params.iterations == 0 { shape.iter().sum::<usize>().max(1) } else { self.params.iterations };
        let one = |p: &RankParams| vec![p.clone(); times];
        let steps: Vec<RankParams> = match self.params.op {
            MorphologyOp::Erosion => one(&erode),
            MorphologyOp::Dilation => one(&dilate),
            MorphologyOp::Opening => [one(&erode), one(&dilate)].concat(),
            MorphologyOp::Closing => [one(&dilate), one(&erode)].concat(),
        };
        let app = self.input.app().clone();
        // Ping-pong between two scratch arrays; the last step writes the output.
        let (even, odd) =
            (XData::<T>::uninit(&app, self.name(), &shape)?, XData::<T>::uninit(&app, self.name(), &shape)?);
        let mut binarize = Elementwise::new(&[&self.input], &even, Expr::input(0).binary(ExprOp::NotEqual, 0.0));
        binarize.init()?;
        let mut filters = Vec::with_capacity(steps.len());
        let last = steps.len().saturating_sub(1);
        for (k, p) in steps.into_iter().enumerate() {
            let (source, next) = if k % 2 == 0 { (&even, &odd) } else { (&odd, &even) };
            let target = if k == last { self.output.clone() } else { next.clone() };
            let mut f = RankFilter::new(source, &target, p);
            f.init()?;
            filters.push(f);
        }
        self.plan.set(Steps { binarize, filters });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let steps = self.plan.get("BinaryMorphology")?;
        steps.binarize.launch()?;
        for f in steps.filters.iter_mut() {
            f.launch()?;
        }
        Ok(())
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

impl std::str::FromStr for MorphologyOp {
    type Err = Error;
    /// `erosion`, `dilation`, `opening` or `closing`.
    fn from_str(operation: &str) -> Result<MorphologyOp> {
        match operation.trim().to_ascii_lowercase().as_str() {
            "erosion" => Ok(MorphologyOp::Erosion),
            "dilation" => Ok(MorphologyOp::Dilation),
            "opening" => Ok(MorphologyOp::Opening),
            "closing" => Ok(MorphologyOp::Closing),
            _ => Err(Error::invalid(
                "binary-morphology",
                format!("`{operation}` is not an operation: give erosion, dilation, opening or closing"),
            )),
        }
    }
}

//! [`GradientMagnitude`]: scipy.ndimage's `gaussian_gradient_magnitude` and `generic_gradient_magnitude` with
//! `sobel`/`prewitt` (and Scharr's weights). On GPUs the 3-tap stencils over 2 or 3 axes, and Gaussians of
//! radius up to 16 over 2 axes, run as one kernel (`kernels/filter_gradient.cl`: each output from its
//! neighbourhood, read once; the Gaussian's rows staged in local memory, its separable sums in registers: H200,
//! σ 2 on 8192², 0.79 ms against 1.13 ms for the convolutions and 8.78 for CuPy); otherwise one derivative
//! convolution per axis into scratch arrays (on CPU devices the host's separable passes), then one element-wise
//! kernel `sqrt(Σ gₖ²)`.

use super::border::Border;
use super::conv_params::{ConvMode, ConvParams};
use super::convolution::{ConvStrategy, Convolution};
use super::weights::{Filter, PREWITT_SMOOTHING, SCHARR_SMOOTHING, SOBEL_SMOOTHING};
use crate::app::{DeviceKind, Kernel};
use crate::data::XData;
use crate::element::RealElement;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::elementwise::{
    Elementwise, Epilogue, EpilogueCode, EpilogueStrategy, Expr, ExprStrategy, PlannedEpilogue,
};
use crate::process::planning::index_type_for;
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
    /// One fused kernel (`Some(true)`) for the 3-tap stencils (Sobel, Prewitt, Scharr) over 2 or 3 axes and for
    /// Gaussians of radius ⌊4σ + 0.5⌋ ≤ 16 over 2 axes (an error for the others), or a convolution per axis and a
    /// magnitude kernel (`Some(false)`). `None`: fused on GPUs where it applies; CPU devices keep the host's
    /// separable passes (PoCL, 2048² Sobel: 8.7 ms, scipy 129).
    pub fused: Option<bool>,
}

impl Default for GradientParams {
    fn default() -> GradientParams {
        GradientParams { derivative: Derivative::Sobel, border: Border::Reflect, rank: None, fused: None }
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
    /// Asks for the fused kernel (`true`) or the convolutions (`false`) instead of the device's choice.
    ///
    /// ```
    /// use cliper::{ClApp, GradientMagnitude, GradientParams, Process, XData};
    /// let app = ClApp::new()?;
    /// let x = XData::<f32>::zeros(&app, &[20, 30])?;
    /// let mut p = GradientMagnitude::new(&x, &XData::zeros(&app, &[20, 30])?, GradientParams::default().fused(true));
    /// p.init()?;
    /// assert!(p.strategy().unwrap().fused);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn fused(mut self, on: bool) -> GradientParams {
        self.fused = Some(on);
        self
    }
}

/// What a [`GradientMagnitude`] runs: one fused kernel, or one convolution per axis and the magnitude kernel.
///
/// ```
/// use cliper::{ClApp, GradientMagnitude, GradientParams, Process, XData};
/// let app = ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[20, 30])?;
/// let y = XData::<f32>::zeros(&app, &[20, 30])?;
/// let mut p = GradientMagnitude::new(&x, &y, GradientParams::default().fused(false));
/// p.init()?;
/// assert_eq!(p.strategy().unwrap().convolutions.len(), 2);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct GradientStrategy {
    /// Whether one kernel computes everything (then there are no convolutions and no magnitude step).
    pub fused: bool,
    /// Each axis's derivative convolution.
    pub convolutions: Vec<ConvStrategy>,
    /// The kernel combining them.
    pub magnitude: ExprStrategy,
}

impl std::fmt::Display for GradientStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.fused {
            return write!(f, "one fused kernel, each output from its neighbourhood (3-tap or Gaussian) read once");
        }
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
    /// Element-wise stages a Pipeline handed over ([`Process::fuse_next`]).
    epilogue: Epilogue<T>,
    plan: Prepared<Stages<T>>,
}

/// What `init` planned: the fused kernel, or the convolutions and the magnitude; and the element-wise stages
/// taken from a Pipeline when they run as a kernel of their own after it.
struct Stages<T: RealElement> {
    run: Run<T>,
    epilogue: PlannedEpilogue,
}

enum Run<T: RealElement> {
    Fused(Box<Fused<T>>),
    Separate { derivatives: Vec<Convolution<T, T>>, magnitude: Box<Elementwise<T, T>> },
}

/// The fused kernel and its arguments (`kernels/filter_gradient.cl`).
struct Fused<T: RealElement> {
    kernel: Kernel,
    /// Element-wise stages computed where the kernel stores the magnitude.
    epilogue: Option<EpilogueCode<T>>,
    index: IndexType,
    /// (nz, ny, nx, batch entries); nz = 1 in 2-D.
    shape: [i32; 4],
    /// Strides (batch, z, y, x) of the input and the output, in elements.
    strides: [[u64; 8]; 2],
    weights: FusedWeights,
    /// The constant border's value.
    value: f64,
    global: [usize; 3],
    local: Option<[usize; 3]>,
    /// The taps each output takes (9 or 27 for the 3-tap stencils), for profiles' rates.
    taps: u64,
}

/// The weights of a fused kernel: a 3-tap stencil's smoothing, passed at each launch, or a Gaussian's four lines,
/// built into the program as literals.
enum FusedWeights {
    /// The smoothing's side and centre weights (Sobel, Prewitt, Scharr).
    Stencil { side: f64, centre: f64 },
    /// Gy, G'y, Gx and G'x, in the program.
    Compiled,
}

/// Where a fused kernel finds its data: the image's trailing axes and the leading ones stepping as one.
struct FusedLayout {
    index: IndexType,
    /// (nz, ny, nx, batch entries); nz = 1 in 2-D.
    shape: [i32; 4],
    strides: [[u64; 8]; 2],
    /// The trailing extents (nz, ny, nx) and the batch entries.
    extents: [usize; 4],
}

/// The 3-tap 2-D kernel's work-group width (columns, read contiguously) and the rows each work-item walks.
const TILE: [usize; 2] = [128, 8];

/// The Gaussian kernel's work-group width (one column each) and the rows each work-item computes. H200, σ 2 on
/// 8192²: 16 rows 0.79 ms, 32 rows 0.92 ms.
const GAUSSIAN_TILE: [usize; 2] = [64, 16];

/// The largest radius (⌊4σ + 0.5⌋, so σ ≤ 4) along either axis the Gaussian kernel takes: its loops unroll by the
/// radii, so the program grows with them; wider Gaussians take the separable convolutions.
const GAUSSIAN_MOST_RADIUS: usize = 16;

/// The single stride of the leading (batch) axes when they step through memory as one axis, with their count;
/// `None` when they do not (a view that skips rows of a batch).
fn batch_stride(shape: &[usize], strides: &[usize]) -> Option<(usize, u64)> {
    let count: usize = shape.iter().product();
    let mut stride = None;
    for (&n, &s) in shape.iter().zip(strides).rev().filter(|(n, _)| **n > 1) {
        match stride {
            None => stride = Some((n, s)),
            Some((inner_n, inner_s)) if s == inner_n * inner_s => stride = Some((n * inner_n, inner_s)),
            Some(_) => return None,
        }
    }
    Some((count, stride.map_or(0, |(_, s)| s as u64)))
}

impl<T: RealElement> GradientMagnitude<T> {
    /// `output = |∇ input|`.
    pub fn new(input: &XData<T>, output: &XData<T>, params: GradientParams) -> GradientMagnitude<T> {
        GradientMagnitude {
            input: input.clone(),
            output: output.clone(),
            params,
            epilogue: Epilogue::new(input, output),
            plan: Prepared::default(),
        }
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
        self.plan.as_ref().map(|s| match &s.run {
            Run::Fused(_) => {
                GradientStrategy { fused: true, convolutions: Vec::new(), magnitude: ExprStrategy::Nothing }
            }
            Run::Separate { derivatives, magnitude } => GradientStrategy {
                fused: false,
                convolutions: derivatives.iter().filter_map(|c| c.strategy()).collect(),
                magnitude: magnitude.strategy().unwrap_or(ExprStrategy::Nothing),
            },
        })
    }

    /// How the element-wise stages a [`crate::Pipeline`] fused after the magnitude run (in the fused kernel's
    /// stores, or as a kernel of their own after it); `None` before `init` or when it took none.
    pub fn epilogue(&self) -> Option<EpilogueStrategy> {
        self.plan.as_ref().and_then(|s| s.epilogue.strategy())
    }

    /// Where a fused kernel over the last `rank` (2 or 3) axes finds its data, or `None` when the leading axes do
    /// not step as one or an extent does not fit the kernel's `int`s. `code`'s arrays count for the index type.
    fn fused_layout(&self, rank: usize, code: Option<&EpilogueCode<T>>) -> Option<FusedLayout> {
        let (input, output) = (&self.input, &self.output);
        let lead = input.ndim() - rank;
        let spatial = |x: &XData<T>| -> [u64; 3] {
            let mut st = [0u64; 3];
            for (k, slot) in st.iter_mut().rev().take(rank).enumerate() {
                *slot = x.strides().get(input.ndim() - 1 - k).copied().unwrap_or(0) as u64;
            }
            st
        };
        let leading = |x: &XData<T>| {
            batch_stride(x.shape().get(..lead).unwrap_or_default(), x.strides().get(..lead).unwrap_or_default())
        };
        let (Some((count, in_b)), Some((_, out_b))) = (leading(input), leading(output)) else {
            return None;
        };
        let (nz, ny, nx) = match input.shape().get(lead..).unwrap_or_default() {
            [ny, nx] => (1, *ny, *nx),
            [nz, ny, nx] => (*nz, *ny, *nx),
            _ => return None,
        };
        let fits = |v: usize| i32::try_from(v).ok();
        let (Some(z), Some(y), Some(x), Some(b), Some(_)) =
            (fits(nz), fits(ny), fits(nx), fits(count), fits(nz * count))
        else {
            return None;
        };
        let [iz, iy, ix] = spatial(input);
        let [oz, oy, ox] = spatial(output);
        let mut layouts = vec![input.layout(), output.layout()];
        layouts.extend(code.iter().flat_map(|c| c.layouts()));
        Some(FusedLayout {
            index: index_type_for(&layouts, &[]),
            shape: [z, y, x, b],
            strides: [[in_b, iz, iy, ix, 0, 0, 0, 0], [out_b, oz, oy, ox, 0, 0, 0, 0]],
            extents: [nz, ny, nx, count],
        })
    }

    /// The fused 3-tap kernel's plan over the last `rank` (2 or 3) axes with these smoothing weights, or `None`
    /// where it does not apply ([`GradientMagnitude::fused_layout`]).
    fn fused_stencil(&self, rank: usize, weights: [f64; 3]) -> Result<Option<Fused<T>>> {
        let code = self.epilogue.in_kernel(self.name())?;
        let Some(layout) = self.fused_layout(rank, code.as_ref()) else { return Ok(None) };
        let [nz, ny, nx, count] = layout.extents;
        let options = format!(
            "{} -DIDX={} {} -DTX={} -DRY={}",
            T::build_options(),
            layout.index.cl_type(),
            self.params.border.build_option(),
            TILE[0],
            TILE[1]
        );
        let program = self.build(&options, code.as_ref())?;
        let name = if rank == 2 { "gradient_magnitude_2d" } else { "gradient_magnitude_3d" };
        let kernel = program.kernel(name)?.owned_by("GradientMagnitude");
        let (global, local) = if rank == 2 {
            ([nx.div_ceil(TILE[0]) * TILE[0], ny.div_ceil(TILE[1]), count], Some([TILE[0], 1, 1]))
        } else {
            ([nx, ny, nz * count], None)
        };
        Ok(Some(Fused {
            kernel,
            epilogue: code,
            index: layout.index,
            shape: layout.shape,
            strides: layout.strides,
            weights: FusedWeights::Stencil { side: weights[0], centre: weights[1] },
            value: self.params.border.value(),
            global,
            local,
            taps: 3u64.pow(rank as u32),
        }))
    }

    /// The fused Gaussian kernel's plan in 2-D with these lines ([`GradientMagnitude::gaussian_lines`]), or `None`
    /// in [`GradientMagnitude::fused_layout`]'s cases.
    fn fused_gaussian(&self, [[gy, dy], [gx, dx]]: &[[Filter<T>; 2]; 2]) -> Result<Option<Fused<T>>> {
        let (ry, rx) = (gy.values().len() / 2, gx.values().len() / 2);
        let code = self.epilogue.in_kernel(self.name())?;
        let Some(layout) = self.fused_layout(2, code.as_ref()) else { return Ok(None) };
        let [_, ny, nx, count] = layout.extents;
        let [width, rows] = GAUSSIAN_TILE;
        // Each weight as a literal that reads back exactly (f32 with its suffix).
        let literals = |f: &Filter<T>| -> String {
            let text: Vec<String> = f
                .values()
                .iter()
                .map(|v| {
                    let v = v.to_c64().re;
                    if T::IS_DOUBLE { format!("{v:e}") } else { format!("{:e}f", v as f32) }
                })
                .collect();
            text.join(",")
        };
        let options = format!(
            "{} -DIDX={} {} -DTX={width} -DRY={rows} -DGAUSS_RY={ry} -DGAUSS_RX={rx} -DGAUSS_WY0={} -DGAUSS_WY1={} \
             -DGAUSS_WX0={} -DGAUSS_WX1={}",
            T::build_options(),
            layout.index.cl_type(),
            self.params.border.build_option(),
            literals(gy),
            literals(dy),
            literals(gx),
            literals(dx),
        );
        let program = self.build(&options, code.as_ref())?;
        let kernel = program.kernel("gaussian_gradient_magnitude_2d")?.owned_by("GradientMagnitude");
        let groups = nx.div_ceil(width);
        Ok(Some(Fused {
            kernel,
            epilogue: code,
            index: layout.index,
            shape: layout.shape,
            strides: layout.strides,
            weights: FusedWeights::Compiled,
            value: self.params.border.value(),
            global: [groups * width, ny.div_ceil(rows), count],
            local: Some([width, 1, 1]),
            taps: 2 * (gy.values().len() + gx.values().len()) as u64,
        }))
    }

    /// filter_gradient.cl's program with `options`, with the stages' epilogue before it when there is one.
    fn build(&self, options: &str, code: Option<&EpilogueCode<T>>) -> Result<crate::app::Program> {
        let source = EpilogueCode::program_source(code, kernels::FILTER_GRADIENT);
        self.input.app().build_program("filter_gradient.cl", &source, options)
    }

    /// The smoothing and derivative lines along y and along x of a 2-D Gaussian gradient, as the separable
    /// convolutions take them; `None` when a radius exceeds [`GAUSSIAN_MOST_RADIUS`] (the fused kernel's limit).
    fn gaussian_lines(&self) -> Result<Option<[[Filter<T>; 2]; 2]>> {
        let sigmas = self.sigmas(2)?;
        let lines = |axis: usize| -> Result<[Filter<T>; 2]> {
            let sigma = sigmas.get(axis).copied().unwrap_or(0.0);
            Ok([Filter::gaussian_derivative(&[sigma], &[0])?, Filter::gaussian_derivative(&[sigma], &[1])?])
        };
        let lines = [lines(0)?, lines(1)?];
        let fits = lines
            .iter()
            .all(|[g, d]| g.values().len() == d.values().len() && g.values().len() / 2 <= GAUSSIAN_MOST_RADIUS);
        Ok(fits.then_some(lines))
    }

    /// The Gaussian's sigma along each of `rank` axes: one given for all, or one per axis.
    fn sigmas(&self, rank: usize) -> Result<Vec<f64>> {
        match &self.params.derivative {
            Derivative::Gaussian(sigmas) => match sigmas.as_slice() {
                [one] => Ok(vec![*one; rank]),
                many if many.len() == rank => Ok(many.to_vec()),
                many => Err(Error::invalid(
                    "GradientMagnitude",
                    format!("gives {} sigmas for a gradient over {rank} axes: give one, or one per axis", many.len()),
                )),
            },
            other => Err(Error::invalid("GradientMagnitude", format!("{other:?} has no sigma"))),
        }
    }

    /// The filter differentiating along axis `axis` of `rank`.
    fn filter(&self, axis: usize, rank: usize) -> Result<Filter<T>> {
        match &self.params.derivative {
            Derivative::Sobel => Filter::sobel(axis, rank),
            Derivative::Prewitt => Filter::prewitt(axis, rank),
            Derivative::Scharr => Filter::scharr(axis, rank),
            Derivative::Gaussian(_) => {
                let orders: Vec<usize> = (0..rank).map(|a| usize::from(a == axis)).collect();
                Filter::gaussian_derivative(&self.sigmas(rank)?, &orders)
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
        let smoothing = match self.params.derivative {
            Derivative::Sobel => Some(SOBEL_SMOOTHING),
            Derivative::Prewitt => Some(PREWITT_SMOOTHING),
            Derivative::Scharr => Some(SCHARR_SMOOTHING),
            Derivative::Gaussian(_) => None,
        };
        let gpu = self.input.app().device().kind != DeviceKind::Cpu;
        if self.params.fused.unwrap_or(gpu) {
            let lines = if smoothing.is_none() && rank == 2 { self.gaussian_lines()? } else { None };
            let applies = match smoothing {
                Some(_) => rank >= 2,
                None => lines.is_some(),
            };
            if !applies && self.params.fused == Some(true) {
                return Err(Error::invalid(
                    self.name(),
                    format!(
                        "the fused kernel takes sobel, prewitt or scharr over 2 or 3 axes, or a Gaussian of radius at \
                         most {GAUSSIAN_MOST_RADIUS} (sigma up to 4) over 2; asked for {:?} over {rank}",
                        self.params.derivative
                    ),
                ));
            }
            let plan = match (smoothing, &lines) {
                (Some(weights), _) if applies => self.fused_stencil(rank, weights)?,
                (None, Some(lines)) => self.fused_gaussian(lines)?,
                _ => None,
            };
            // A view whose leading axes do not step as one takes the convolutions.
            if let Some(fused) = plan {
                let epilogue = self.epilogue.plan(fused.epilogue.is_some())?;
                self.plan.set(Stages { run: Run::Fused(Box::new(fused)), epilogue });
                return Ok(());
            }
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
        let epilogue = self.epilogue.plan(false)?;
        self.plan.set(Stages { run: Run::Separate { derivatives, magnitude: Box::new(magnitude) }, epilogue });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let (input, output) = (&self.input, &self.output);
        let stages = self.plan.get("GradientMagnitude")?;
        match &mut stages.run {
            Run::Fused(f) => {
                if input.is_empty() {
                    return Ok(());
                }
                let t = |v: f64| T::from_c64(v.into());
                let element = std::mem::size_of::<T>() as u64;
                let l = f
                    .kernel
                    .launch()
                    .input("src", input)
                    .index("src_off", f.index, input.offset() as u64)
                    .output("dst", output)
                    .index("dst_off", f.index, output.offset() as u64)
                    .scalar("shape", f.shape)
                    .scalar("in_st", f.strides[0])
                    .scalar("out_st", f.strides[1]);
                let l = match &f.weights {
                    FusedWeights::Stencil { side, centre } => l.scalar("side", t(*side)).scalar("centre", t(*centre)),
                    FusedWeights::Compiled => l,
                };
                let l = l.scalar("value", t(f.value));
                let l = match &f.epilogue {
                    Some(e) => e.set_args(l, f.index),
                    None => l,
                };
                let mut l = l.global(&f.global).work(2 * input.len() as u64 * element, 2 * f.taps * input.len() as u64);
                if let Some(local) = &f.local {
                    l = l.local(local);
                }
                l.enqueue()?;
            }
            Run::Separate { derivatives, magnitude } => {
                for c in derivatives.iter_mut() {
                    c.launch()?;
                }
                magnitude.launch()?;
            }
        }
        stages.epilogue.launch()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }

    fn fuse_next(&mut self, next: &mut dyn Process) -> bool {
        !self.plan.is_ready() && self.epilogue.offer(next)
    }
}

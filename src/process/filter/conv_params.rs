//! The settings of a convolution ([`ConvParams`]: mode, output extent, border, origin, stride, dilation,
//! normalisation, algorithm) and what they make of each axis ([`AxisPlan`]), shared by [`super::Convolution`],
//! [`super::SeparableConvolution`] and the FFT path.

use super::border::Border;
use super::conv_pass::PassPreference;
use crate::error::{Error, Result};

/// Whether the filter is flipped.
///
/// ```
/// use cliper::{ConvMode, ConvParams, Convolution, Filter, XData};
/// let app = cliper::ClApp::new()?;
/// let x = XData::from_slice(&app, &[3], &[0.0f32, 1.0, 0.0])?;
/// let w = Filter::new(&[3], vec![1.0f32, 2.0, 3.0])?;
/// // An impulse convolved gives the filter; correlated, the filter reversed.
/// assert_eq!(Convolution::apply(&x, &w, ConvParams::default())?.to_vec()?, vec![1.0, 2.0, 3.0]);
/// let corr = ConvParams::default().mode(ConvMode::Correlation);
/// assert_eq!(Convolution::apply(&x, &w, corr)?.to_vec()?, vec![3.0, 2.0, 1.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ConvMode {
    /// `out[i] = Σⱼ w[j]·in[i − j + c]`: the filter is flipped (scipy.ndimage.convolve, MATLAB `conv2`,
    /// numpy.convolve).
    #[default]
    Convolution,
    /// `out[i] = Σⱼ w[j]·in[i + j − c]`: no flip (scipy.ndimage.correlate, cuDNN and PyTorch `conv2d`).
    Correlation,
}

/// Which outputs are computed.
///
/// ```
/// use cliper::{ConvOutput, ConvParams, Convolution};
/// let shape = |output| Convolution::<f32>::output_shape(&[10], &[3], &ConvParams::default().output(output));
/// assert_eq!((shape(ConvOutput::Same)?, shape(ConvOutput::Valid)?, shape(ConvOutput::Full)?), (vec![10], vec![8], vec![12]));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ConvOutput {
    /// The input's extent (`⌈n / stride⌉`), the filter centred by scipy.ndimage's rule: its element `w//2 +
    /// origin` (for a convolution, `w//2 + origin` of the flipped filter's mirror image, so even filters centre
    /// as scipy.ndimage.convolve does) sits on the output pixel. Borders are read through the [`Border`] rule.
    #[default]
    Same,
    /// Only outputs whose window lies inside the input: `n − w_eff + 1` (none when the filter is larger), where
    /// `w_eff = (w − 1)·dilation + 1`.
    Valid,
    /// Every output the window touches: `n + w_eff − 1` (scipy.signal's / numpy's `full`), borders read through
    /// the [`Border`] rule.
    Full,
}

impl std::str::FromStr for ConvMode {
    type Err = Error;
    /// `conv` / `convolution` or `corr` / `correlation` (the pipeline-file and command-line names).
    ///
    /// ```
    /// assert_eq!("corr".parse::<cliper::ConvMode>()?, cliper::ConvMode::Correlation);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    fn from_str(name: &str) -> Result<ConvMode> {
        match name {
            "conv" | "convolution" => Ok(ConvMode::Convolution),
            "corr" | "correlation" => Ok(ConvMode::Correlation),
            other => Err(Error::invalid("convolution mode", format!("`{other}` is not conv or corr"))),
        }
    }
}

impl std::str::FromStr for ConvOutput {
    type Err = Error;
    /// `same`, `valid` or `full`.
    ///
    /// ```
    /// assert_eq!("valid".parse::<cliper::ConvOutput>()?, cliper::ConvOutput::Valid);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    fn from_str(name: &str) -> Result<ConvOutput> {
        match name {
            "same" => Ok(ConvOutput::Same),
            "valid" => Ok(ConvOutput::Valid),
            "full" => Ok(ConvOutput::Full),
            other => Err(Error::invalid("convolution output", format!("`{other}` is not same, valid or full"))),
        }
    }
}

/// Which algorithm [`super::Convolution`] runs (the planner's choice, or an override for tests and tuning).
///
/// ```
/// use cliper::{ConvAlgorithm, ConvParams, ConvStrategy, Convolution, Filter, Process, XData};
/// let app = cliper::ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[40, 40])?;
/// let mut c = Convolution::new(&x, &Filter::<f32>::sobel_x(), &XData::zeros(&app, &[40, 40])?,
///     ConvParams::default().algorithm(ConvAlgorithm::Direct));
/// c.init()?;
/// assert_eq!(c.strategy(), Some(ConvStrategy::Direct));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ConvAlgorithm {
    /// Let the planner choose from the filter, the sizes and the device.
    #[default]
    Auto,
    /// One output per work-item, input read through the caches (`conv_direct`).
    Direct,
    /// Output tiles per work-group with the input tile and halo staged in local memory (`conv_tiled`); falls
    /// back to `Direct` when the tile does not fit the device's local memory.
    Tiled,
    /// The filter's extents compiled in, several outputs per work-item in registers, input planes staged in
    /// local memory once and rows streamed through registers (`conv_blocked`); stride and dilation 1 and up to
    /// 32 × 32 × 8 taps, otherwise it falls back to `Tiled`.
    Blocked,
    /// One 1-D pass per axis; an error when the filter is not rank-1.
    Separable,
    /// A rank-1 filter's factors applied one after the other in one `conv_blocked` pass: each staged row is
    /// filtered along x once, then combined down y (and z), so the image is read and written once. Falls back to
    /// `Separable` where conv_blocked does not take the geometry (stride or dilation other than 1, more than 32
    /// taps along x or y, more than 8 along z); an error when the filter is not rank-1.
    SeparableFused,
    /// Through the FFT: border extension, forward transforms, product with the filter's transform, inverse
    /// (stride and dilation 1 only).
    Fft,
}

/// The settings of a convolution: mode, output size, border rule, origin, stride, dilation, normalisation and
/// algorithm. Per-axis settings take one value per filter axis, or one value for all axes.
///
/// The defaults are scipy.ndimage's, whose semantics [`super::Convolution`] follows: a convolution
/// ([`ConvMode::Convolution`], `scipy.ndimage.convolve`), the input's extent ([`ConvOutput::Same`]), the border
/// scipy calls `reflect` ([`Border::Reflect`]: `c b a │ a b c d │ d c b`), origin 0, stride 1, dilation 1,
/// no normalisation, and the planner's algorithm (separable passes for rank-1 filters where they pay).
///
/// ```
/// use cliper::{Border, ConvOutput, ConvParams, Convolution};
/// assert_eq!(ConvParams::default(), ConvParams::default().border(Border::Reflect)); // scipy's mode='reflect'
/// let p = ConvParams::default().border(Border::Mirror).stride(&[2]).output(ConvOutput::Same);
/// assert_eq!(Convolution::<f32>::output_shape(&[4, 101, 80], &[5, 5], &p)?, vec![4, 51, 40]); // axis 0: a batch
/// let full = ConvParams::default().output(ConvOutput::Full).dilation(&[1, 3]);
/// assert_eq!(Convolution::<f32>::output_shape(&[100, 80], &[5, 5], &full)?, vec![104, 92]);
/// let zero_stride = ConvParams::default().stride(&[0]);
/// assert!(Convolution::<f32>::output_shape(&[9], &[3], &zero_stride).unwrap_err().to_string().contains("stride"));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ConvParams {
    pub(super) mode: ConvMode,
    pub(super) output: ConvOutput,
    pub(super) border: Border,
    origin: Vec<isize>,
    stride: Vec<usize>,
    dilation: Vec<usize>,
    pub(super) normalize: bool,
    pub(super) no_separable: bool,
    pub(super) algorithm: ConvAlgorithm,
    pub(super) kernels_only: bool,
}

impl Default for ConvParams {
    fn default() -> ConvParams {
        ConvParams {
            mode: ConvMode::Convolution,
            output: ConvOutput::Same,
            border: Border::Reflect,
            origin: Vec::new(),
            stride: Vec::new(),
            dilation: Vec::new(),
            normalize: false,
            no_separable: false,
            algorithm: ConvAlgorithm::Auto,
            kernels_only: false,
        }
    }
}

impl ConvParams {
    /// Convolution (flipped filter) or correlation.
    pub fn mode(mut self, mode: ConvMode) -> ConvParams {
        self.mode = mode;
        self
    }

    /// Same, valid or full output.
    pub fn output(mut self, output: ConvOutput) -> ConvParams {
        self.output = output;
        self
    }

    /// The border rule for outputs whose window leaves the input (`Same` and `Full`).
    pub fn border(mut self, border: Border) -> ConvParams {
        self.border = border;
        self
    }

    /// scipy.ndimage's `origin` per axis (shifts the filter; `Same` only): between `−(w_eff/2)` and
    /// `(w_eff − 1)/2`.
    pub fn origin(mut self, origin: &[isize]) -> ConvParams {
        self.origin = origin.to_vec();
        self
    }

    /// Output stride per axis (≥ 1): output `i` is the stride-1 output `i·stride`.
    pub fn stride(mut self, stride: &[usize]) -> ConvParams {
        self.stride = stride.to_vec();
        self
    }

    /// Filter dilation per axis (≥ 1): taps `dilation` input elements apart.
    pub fn dilation(mut self, dilation: &[usize]) -> ConvParams {
        self.dilation = dilation.to_vec();
        self
    }

    /// Divide the filter by the sum of its weights first (an error for zero-sum filters). Off by default.
    pub fn normalize(mut self, on: bool) -> ConvParams {
        self.normalize = on;
        self
    }

    /// Whether rank-1 filters may run as separable passes (on by default; results agree to rounding).
    pub fn separable(mut self, allowed: bool) -> ConvParams {
        self.no_separable = !allowed;
        self
    }

    /// Keeps the OpenCL kernels on a CPU device, where the planner otherwise runs filters along one axis (1-D
    /// filters and separable passes) on the host's threads ([`super::ConvStrategy::Host`]): for comparisons,
    /// and the kernels' own tests.
    ///
    /// ```
    /// use cliper::{ClApp, ConvParams, ConvStrategy, Convolution, DeviceKind, Filter, Process, XData};
    /// let app = ClApp::new()?;
    /// let (x, y) = (XData::<f32>::zeros(&app, &[50, 60])?, XData::<f32>::zeros(&app, &[50, 60])?);
    /// let smooth = Filter::new(&[1, 5], vec![0.2f32; 5])?; // along x only
    /// let mut planned = Convolution::new(&x, &smooth, &y, ConvParams::default());
    /// let mut kernels = Convolution::new(&x, &smooth, &y, ConvParams::default().kernels_only(true));
    /// planned.init()?;
    /// kernels.init()?;
    /// assert_eq!(planned.strategy() == Some(ConvStrategy::Host), app.device().kind == DeviceKind::Cpu);
    /// assert_ne!(kernels.strategy(), Some(ConvStrategy::Host));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn kernels_only(mut self, on: bool) -> ConvParams {
        self.kernels_only = on;
        self
    }

    /// What the passes ask for: the kernel named by [`ConvParams::algorithm`]; for the planner's choice and
    /// separable passes the host on CPU devices (unless [`ConvParams::kernels_only`]), else `conv_blocked` (which
    /// falls back to `conv_tiled`).
    pub(crate) fn pass_preference(&self) -> PassPreference {
        match self.algorithm {
            ConvAlgorithm::Direct => PassPreference::Direct,
            ConvAlgorithm::Tiled => PassPreference::Tiled,
            ConvAlgorithm::Auto | ConvAlgorithm::Separable | ConvAlgorithm::SeparableFused if !self.kernels_only => {
                PassPreference::Host
            }
            _ => PassPreference::Blocked,
        }
    }

    /// Overrides the planner's algorithm choice.
    pub fn algorithm(mut self, algorithm: ConvAlgorithm) -> ConvParams {
        self.algorithm = algorithm;
        self
    }

    /// The output shape for an input and a filter shape: the input's leading (batch) axes, then one extent per
    /// filter axis.
    pub(super) fn output_shape(&self, input: &[usize], filter: &[usize]) -> Result<Vec<usize>> {
        let axes = self.axes("Convolution", input, filter)?;
        let lead = input.len() - filter.len();
        Ok(input.iter().take(lead).copied().chain(axes.iter().map(|a| a.out)).collect())
    }

    /// Per-axis plan, validated: output extent and start.
    pub(crate) fn axes(&self, op: &str, input: &[usize], filter: &[usize]) -> Result<Vec<AxisPlan>> {
        let r = filter.len();
        if r == 0 || r > 3 {
            return Err(Error::invalid(op, format!("a filter has 1 to 3 axes, got shape {filter:?}")));
        }
        if r > input.len() {
            return Err(Error::invalid(
                op,
                format!(
                    "the filter of shape {filter:?} has {r} axes but the input of shape {input:?} only {}",
                    input.len()
                ),
            ));
        }
        if let Some(k) = filter.iter().position(|&w| w == 0) {
            return Err(Error::invalid(op, format!("axis {k} of the filter shape {filter:?} is empty")));
        }
        let stride = per_axis(op, "stride", &self.stride, r, 1)?;
        let dilation = per_axis(op, "dilation", &self.dilation, r, 1)?;
        let origin = per_axis(op, "origin", &self.origin, r, 0)?;
        if let Some(k) = stride.iter().position(|&s| s == 0) {
            return Err(Error::invalid(
                op,
                format!("stride {:?}: axis {k} has stride 0; strides are at least 1", stride),
            ));
        }
        if let Some(k) = dilation.iter().position(|&d| d == 0) {
            return Err(Error::invalid(
                op,
                format!("dilation {:?}: axis {k} has dilation 0; dilations are at least 1", dilation),
            ));
        }
        let lead = input.len() - r;
        let per_axis = input.iter().skip(lead).zip(filter).zip(dilation.iter().zip(&stride)).zip(&origin);
        per_axis
            .enumerate()
            .map(|(k, (((&n, &w), (&d, &s)), &o))| {
                let span = (w - 1)
                    .checked_mul(d)
                    .and_then(|v| v.checked_add(1))
                    .ok_or_else(|| Error::invalid(op, format!("filter extent {w} with dilation {d} overflows")))?;
                let (count, start) = match self.output {
                    ConvOutput::Same => {
                        let (lo, hi) = (-((span / 2) as isize), ((span - 1) / 2) as isize);
                        if o < lo || o > hi {
                            return Err(Error::invalid(
                                op,
                                format!(
                                    "origin {o} on axis {k} is outside [{lo}, {hi}] for a filter spanning {span} \
                                     elements"
                                ),
                            ));
                        }
                        let c = (span / 2) as i64 + o as i64;
                        let start = match self.mode {
                            ConvMode::Correlation => c,
                            ConvMode::Convolution => span as i64 - 1 - c,
                        };
                        (n, start)
                    }
                    _ if o != 0 => {
                        return Err(Error::invalid(
                            op,
                            format!("origin {o} on axis {k}: an origin only applies to ConvOutput::Same"),
                        ));
                    }
                    ConvOutput::Valid => ((n + 1).saturating_sub(span), 0),
                    ConvOutput::Full => (n + span - 1, span as i64 - 1),
                };
                Ok(AxisPlan { filter: w, stride: s, dilation: d, start, out: count.div_ceil(s) })
            })
            .collect()
    }
}

/// One spatial axis of a convolution: filter extent, stride, dilation, start (input coordinate of output 0's
/// first tap, negated) and output extent.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AxisPlan {
    pub filter: usize,
    pub stride: usize,
    pub dilation: usize,
    pub start: i64,
    pub out: usize,
}

fn per_axis<V: Copy + std::fmt::Debug>(op: &str, what: &str, values: &[V], r: usize, default: V) -> Result<Vec<V>> {
    match values {
        [] => Ok(vec![default; r]),
        &[v] => Ok(vec![v; r]),
        _ if values.len() == r => Ok(values.to_vec()),
        _ => Err(Error::invalid(
            op,
            format!(
                "{what} {values:?} has {} values for a {r}-axis filter; give one per axis or one for all",
                values.len()
            ),
        )),
    }
}

//! [`Wavelet`]: the multilevel Daubechies-2 wavelet analysis of an image into one coefficient vector, or the
//! synthesis back.

use super::plan::WaveletPlan;
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::process::{Prepared, Process};

/// The settings of a [`Wavelet`]: analysis (image → coefficients, the default) or synthesis (coefficients →
/// image), and how many levels.
///
/// Levels: by default BART's rule — an axis of extent n keeps being split while its low band is at least
/// min(n, 16) long (128 → 65 → 34 → 18 → 10: four splits); [`WaveletParams::levels`] splits every axis of
/// extent > 1 that many times instead (PyWavelets' `level=`).
///
/// The coefficient vector: the final all-low band first, then the levels from the coarsest to the finest, each
/// level's detail bands in order of their index — the index's bits are low (0) or high (1) along the split axes,
/// the first split axis the most significant (for 2-D: LH, HL, HH, where LH is low along axis 0 and high along
/// axis 1; PyWavelets' `(cH, cV, cD)` = (`da`, `ad`, `dd`) are HL, LH, HH) — each band row-major. A band of an axis
/// of n samples has (n + 3) / 2.
///
/// ```
/// use cliper::WaveletParams;
/// let p = WaveletParams::synthesis().levels(2);
/// assert!(p.is_synthesis() && p.level_count() == Some(2));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaveletParams {
    synthesis: bool,
    levels: Option<usize>,
}

impl WaveletParams {
    /// Analysis with BART's levels.
    pub fn analysis() -> WaveletParams {
        WaveletParams::default()
    }

    /// Synthesis with BART's levels.
    pub fn synthesis() -> WaveletParams {
        WaveletParams { synthesis: true, levels: None }
    }

    /// Splits every axis of extent > 1 this many times.
    pub fn levels(mut self, levels: usize) -> WaveletParams {
        self.levels = Some(levels);
        self
    }

    /// Whether this is the synthesis.
    pub fn is_synthesis(&self) -> bool {
        self.synthesis
    }

    /// The fixed level count, if set.
    pub fn level_count(&self) -> Option<usize> {
        self.levels
    }
}

/// How a [`Wavelet`] runs, as `strategy()` reports it: the axes split at each level (finest first), the splits per
/// axis, and the coefficient count.
///
/// ```
/// use cliper::{Process, Wavelet, WaveletParams, XData};
/// let app = cliper::ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[128, 128])?;
/// let c = XData::zeros(&app, &Wavelet::<f32>::output_shape(&[128, 128], &WaveletParams::analysis())?)?;
/// let mut w = Wavelet::new(&x, &c, WaveletParams::analysis());
/// w.init()?;
/// let s = w.strategy().unwrap();
/// assert_eq!((s.splits_per_axis.clone(), s.coefficients), (vec![4, 4], 17515)); // 128 → 65 → 34 → 18 → 10
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaveletStrategy {
    /// The axes each level splits, finest level first.
    pub levels: Vec<Vec<usize>>,
    /// Splits per axis.
    pub splits_per_axis: Vec<usize>,
    /// Coefficients in the vector.
    pub coefficients: usize,
}

impl std::fmt::Display for WaveletStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Daubechies-2, {} levels (splits per axis {:?}), {} coefficients",
            self.levels.len(),
            self.splits_per_axis,
            self.coefficients
        )
    }
}

/// The Daubechies-2 wavelet transform of an image over its axes (1 to 3), several levels, with half-sample
/// symmetric extension: PyWavelets' `wavedecn(x, "db2", mode="symmetric")` and BART's `dau2` (the transform
/// `pics -l1` thresholds). Analysis writes the coefficient vector laid out as [`WaveletParams`] says; synthesis
/// inverts it exactly (the frame is redundant: synthesis is the analysis's left inverse, not its adjoint).
/// Real and complex element types; contiguous arrays.
///
/// ```
/// use cliper::{Process, Wavelet, WaveletParams, XData};
/// let app = cliper::ClApp::new()?;
/// let image: Vec<f64> = (0..40 * 27).map(|i| ((i * 7) % 13) as f64).collect();
/// let x = XData::from_slice(&app, &[40, 27], &image)?;
/// let c = Wavelet::apply(&x, WaveletParams::analysis())?;
/// let back = Wavelet::apply(&c, WaveletParams::synthesis().image_shape(&[40, 27]))?;
/// let worst = back.to_vec()?.iter().zip(&image).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
/// assert!(worst < 1e-12, "{worst}");
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Wavelet<T: Element> {
    input: XData<T>,
    output: XData<T>,
    params: WaveletParams,
    plan: Prepared<WaveletPlan<T>>,
}

impl WaveletParams {
    /// For synthesis through [`Wavelet::apply`]: the image shape the coefficients came from (`apply` cannot tell
    /// it from the vector's length).
    pub fn image_shape(self, shape: &[usize]) -> ShapedWaveletParams {
        ShapedWaveletParams { params: self, shape: shape.to_vec() }
    }
}

/// [`WaveletParams`] with the image shape, for [`Wavelet::apply`] (synthesis needs it).
///
/// ```
/// let p = cliper::WaveletParams::synthesis().image_shape(&[64, 64]);
/// assert_eq!(p.shape, vec![64, 64]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapedWaveletParams {
    /// The transform's settings.
    pub params: WaveletParams,
    /// The image shape.
    pub shape: Vec<usize>,
}

impl From<WaveletParams> for ShapedWaveletParams {
    fn from(params: WaveletParams) -> ShapedWaveletParams {
        ShapedWaveletParams { params, shape: Vec::new() }
    }
}

impl<T: Element> Wavelet<T> {
    /// Analysis: `input` is the image and `output` the coefficients (`output_shape(image shape)`); synthesis:
    /// the other way round.
    pub fn new(input: &XData<T>, output: &XData<T>, params: WaveletParams) -> Wavelet<T> {
        Wavelet { input: input.clone(), output: output.clone(), params, plan: Prepared::default() }
    }

    /// The coefficient vector's shape for an image of `shape`: `[count]`.
    pub fn output_shape(shape: &[usize], params: &WaveletParams) -> Result<Vec<usize>> {
        Ok(vec![super::plan::coefficient_count(shape, params.levels, MIN_SIZE)?])
    }

    /// Allocates the output and transforms once: analysis of an image (`WaveletParams`), or synthesis of a
    /// coefficient vector into the image shape given with [`WaveletParams::image_shape`].
    pub fn apply(input: &XData<T>, params: impl Into<ShapedWaveletParams>) -> Result<XData<T>> {
        let ShapedWaveletParams { params, shape } = params.into();
        let out_shape = if params.synthesis {
            if shape.is_empty() {
                return Err(Error::invalid(
                    "Wavelet",
                    "synthesis needs the image shape: WaveletParams::synthesis().image_shape(&shape)",
                ));
            }
            shape
        } else {
            Self::output_shape(input.shape(), &params)?
        };
        let out = XData::uninit(input.app(), "Wavelet", &out_shape)?;
        Wavelet::new(input, &out, params).run()?;
        Ok(out)
    }

    /// How it runs, once initialised.
    pub fn strategy(&self) -> Option<WaveletStrategy> {
        let plan = self.plan.as_ref()?;
        Some(WaveletStrategy {
            levels: plan.levels.clone(),
            splits_per_axis: plan.splits_per_axis.clone(),
            coefficients: plan.coefficients,
        })
    }
}

/// BART's minimum band size: an axis is split while its low band is at least min(n, 16).
pub(crate) const MIN_SIZE: usize = 16;

impl<T: Element> Process for Wavelet<T> {
    fn name(&self) -> &str {
        "Wavelet"
    }

    fn init(&mut self) -> Result<()> {
        let (image, coefficients) =
            if self.params.synthesis { (&self.output, &self.input) } else { (&self.input, &self.output) };
        let plan = WaveletPlan::new(image.app(), image.shape(), self.params.levels, MIN_SIZE)?;
        if coefficients.shape() != [plan.coefficients] {
            let why = format!("the coefficients of an image of shape {:?}", image.shape());
            return Err(Error::shape_because("Wavelet", &[plan.coefficients], coefficients.shape(), why));
        }
        for (what, a) in [("image", image), ("coefficients", coefficients)] {
            if !a.is_contiguous() {
                return Err(Error::invalid("Wavelet", format!("the {what} must be contiguous")));
            }
        }
        self.plan.set(plan);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let (input, output, synthesis) = (self.input.clone(), self.output.clone(), self.params.synthesis);
        let plan = self.plan.get("Wavelet")?;
        if synthesis { plan.synthesise(&input, &output) } else { plan.analyse(&input, &output) }
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

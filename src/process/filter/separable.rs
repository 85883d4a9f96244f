//! [`SeparableConvolution`]: a convolution given as one 1-D filter per axis, run as one pass per axis or, where the
//! planner chooses, as one pass of the factors.

use super::conv_params::ConvParams;
use super::convolution::{ConvPlan, ConvStrategy, check_arrays, oriented};
use super::weights::{Filter, FilterElement};
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::process::elementwise::{Epilogue, EpilogueStrategy};
use crate::process::{Prepared, Process};

/// The convolution with the outer product of 1-D filters, one per trailing axis (`factors[0]` along the first
/// filtered axis), computed as one 1-D pass per axis: `Σ wₖ` multiply-adds per output instead of `Π wₖ`; or, for
/// 2 or 3 short factors where the passes would not run on a CPU device's host threads (GPUs), as one `conv_blocked`
/// pass of the factors ([`ConvStrategy::SeparableFused`], as [`super::Convolution`] plans rank-1 filters;
/// [`super::ConvAlgorithm::Separable`] keeps the passes).
/// Results equal [`super::Convolution`] with `Filter::outer(factors)` to rounding, for every mode, output size,
/// border (constant borders included), stride and dilation. [`super::Convolution`] finds rank-1 filters by
/// itself; use this when the factors are what you have.
///
/// ```
/// use cliper::{Border, ClApp, ConvParams, Filter, SeparableConvolution, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let smooth = Filter::new(&[2], vec![0.5f32, 0.5])?;
/// let diff = Filter::new(&[3], vec![1.0f32, 0.0, -1.0])?;
/// let y = SeparableConvolution::apply(&x, &[smooth, diff], ConvParams::default().border(Border::Nearest))?;
/// assert_eq!(y.shape(), &[2, 3]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct SeparableConvolution<T: Element, K: FilterElement<T> = T> {
    input: XData<T>,
    output: XData<T>,
    factors: Vec<Filter<K>>,
    params: ConvParams,
    /// Element-wise stages a Pipeline handed over ([`Process::fuse_next`]).
    epilogue: Epilogue<T>,
    plan: Prepared<ConvPlan<T, K>>,
}

impl<T: Element, K: FilterElement<T>> SeparableConvolution<T, K> {
    /// A separable convolution of `input` by one 1-D filter per filtered axis into `output`.
    pub fn new(
        input: &XData<T>,
        factors: &[Filter<K>],
        output: &XData<T>,
        params: ConvParams,
    ) -> SeparableConvolution<T, K> {
        SeparableConvolution {
            input: input.clone(),
            output: output.clone(),
            factors: factors.to_vec(),
            params,
            epilogue: Epilogue::new(input, output),
            plan: Prepared::default(),
        }
    }

    /// Allocates the output, convolves into it once and returns it.
    pub fn apply(input: &XData<T>, factors: &[Filter<K>], params: ConvParams) -> Result<XData<T>> {
        let shape = Self::output_shape(input.shape(), &filter_shape(factors)?, &params)?;
        let output = XData::uninit(input.app(), "SeparableConvolution", &shape)?;
        SeparableConvolution::new(input, factors, &output, params).run()?;
        Ok(output)
    }

    /// The output shape for an input shape and the factors' lengths (as [`super::Convolution::output_shape`]
    /// with the outer product's shape).
    ///
    /// ```
    /// use cliper::{ConvOutput, ConvParams, SeparableConvolution};
    /// let full = ConvParams::default().output(ConvOutput::Full);
    /// assert_eq!(SeparableConvolution::<f32>::output_shape(&[10, 20], &[3, 5], &full)?, vec![12, 24]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(input: &[usize], lengths: &[usize], params: &ConvParams) -> Result<Vec<usize>> {
        params.output_shape(input, lengths)
    }

    /// The plan `init` made ([`ConvStrategy::Separable`] or [`ConvStrategy::SeparableFused`], unless the output is
    /// empty); `None` before.
    pub fn strategy(&self) -> Option<ConvStrategy> {
        self.plan.as_ref().map(|p| p.strategy())
    }

    /// How the element-wise stages a [`crate::Pipeline`] fused after this convolution run; `None` before `init`
    /// or when it took none. See [`EpilogueStrategy`].
    pub fn epilogue(&self) -> Option<EpilogueStrategy> {
        self.plan.as_ref().and_then(|p| p.epilogue())
    }
}

fn filter_shape<K: Element>(factors: &[Filter<K>]) -> Result<Vec<usize>> {
    let lengths: Vec<usize> =
        factors.iter().filter_map(|f| if let &[n] = f.shape() { Some(n) } else { None }).collect();
    if factors.is_empty() || factors.len() > 3 || lengths.len() != factors.len() {
        let shapes: Vec<&[usize]> = factors.iter().map(|f| f.shape()).collect();
        return Err(Error::invalid(
            "SeparableConvolution",
            format!("needs one to three 1-D filters, one per axis; got filters of shapes {shapes:?}"),
        ));
    }
    Ok(lengths)
}

impl<T: Element, K: FilterElement<T>> Process for SeparableConvolution<T, K> {
    fn name(&self) -> &str {
        "SeparableConvolution"
    }

    fn init(&mut self) -> Result<()> {
        let op = "SeparableConvolution";
        let shape = filter_shape(&self.factors)?;
        let axes = check_arrays(op, &self.params, &self.input, &self.output, &shape)?;
        let factors = self.factors.iter().map(|f| oriented(f, &self.params)).collect::<Result<Vec<_>>>()?;
        let (p, e) = (&self.params, &self.epilogue);
        if let Some(plan) = ConvPlan::fused_where_chosen(op, p, &self.input, &self.output, &factors, &axes, e)? {
            self.plan.set(plan);
            return Ok(());
        }
        self.plan.set(ConvPlan::separable(
            op,
            &self.params,
            &self.input,
            &self.output,
            &factors,
            &axes,
            self.params.pass_preference(),
            &self.epilogue,
        )?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        self.plan.get("SeparableConvolution")?.launch()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }

    fn fuse_next(&mut self, next: &mut dyn Process) -> bool {
        !self.plan.is_ready() && self.epilogue.offer(next)
    }
}

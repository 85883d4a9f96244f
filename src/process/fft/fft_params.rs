//! What an [`Fft`](super::Fft) computes: the direction, numpy's normalisations, the axes and, for tuning, the
//! algorithm ([`FftParams`]), and the transformed axes those name in a shape.

use crate::error::{Error, Result};

/// The sign of the exponent: forward `exp(−2πi·jk/n)` (numpy `fft`), inverse `exp(+2πi·jk/n)` (`ifft`).
///
/// ```
/// use cliper::{FftDirection, FftParams};
/// assert_eq!(FftParams::inverse().direction(), FftDirection::Inverse);
/// assert_eq!(FftDirection::default(), FftDirection::Forward);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FftDirection {
    /// `X_k = Σ x_j · exp(−2πi·jk/n)`.
    #[default]
    Forward,
    /// `x_j = Σ X_k · exp(+2πi·jk/n)`, scaled by the normalisation.
    Inverse,
}

/// numpy's `norm` argument: which direction carries the 1/n.
///
/// ```
/// use cliper::{Fft, FftNorm, FftParams, XData};
/// use num_complex::Complex32 as C;
/// let app = cliper::ClApp::new()?;
/// let x = XData::from_slice(&app, &[4], &[C::new(1.0, 0.0); 4])?;
/// let y = Fft::apply(&x, FftParams::forward().norm(FftNorm::Ortho))?; // × 1/√4
/// assert!((y.to_vec()?[0] - C::new(2.0, 0.0)).norm() < 1e-6);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FftNorm {
    /// Forward unscaled, inverse × 1/n (numpy's default `"backward"`).
    #[default]
    Backward,
    /// Both × 1/√n (`"ortho"`: the transform is unitary).
    Ortho,
    /// Forward × 1/n, inverse unscaled (`"forward"`).
    Forward,
}

impl FftNorm {
    /// The factor for one axis of length `n` in `direction`.
    pub(super) fn scale(self, n: usize, direction: FftDirection) -> f64 {
        let n = n as f64;
        match (self, direction) {
            (FftNorm::Ortho, _) => 1.0 / n.sqrt(),
            (FftNorm::Backward, FftDirection::Inverse) | (FftNorm::Forward, FftDirection::Forward) => 1.0 / n,
            _ => 1.0,
        }
    }

    /// `"backward"`, `"ortho"` or `"forward"`, as numpy spells them.
    ///
    /// ```
    /// assert_eq!(cliper::FftNorm::numpy("ortho")?, cliper::FftNorm::Ortho);
    /// assert!(cliper::FftNorm::numpy("unitary").is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn numpy(name: &str) -> Result<FftNorm> {
        match name {
            "backward" => Ok(FftNorm::Backward),
            "ortho" => Ok(FftNorm::Ortho),
            "forward" => Ok(FftNorm::Forward),
            other => Err(Error::invalid("Fft", format!("norm `{other}`: expected backward, ortho or forward"))),
        }
    }
}

/// The parameters of an [`Fft`](super::Fft): direction, axes (default all), normalisation (default numpy's
/// `"backward"`) and, for tuning, the algorithm. Default: forward over every axis.
///
/// ```
/// use cliper::{FftAlgorithm, FftDirection, FftNorm, FftParams};
/// let p = FftParams::inverse().axes(&[1, 2]).norm(FftNorm::Ortho);
/// assert_eq!(p.direction(), FftDirection::Inverse);
/// assert_eq!(FftParams::default(), FftParams::forward());
/// let tuned = FftParams::forward().algorithm(FftAlgorithm::GlobalPasses);
/// # let _ = tuned;
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FftParams {
    pub(super) direction: FftDirection,
    axes: Option<Vec<usize>>,
    pub(super) norm: FftNorm,
    pub(super) algorithm: FftAlgorithm,
}

impl FftParams {
    /// A transform in `direction` over every axis.
    pub fn new(direction: FftDirection) -> FftParams {
        FftParams { direction, ..FftParams::default() }
    }

    /// The forward transform (numpy `fftn`).
    pub fn forward() -> FftParams {
        FftParams::new(FftDirection::Forward)
    }

    /// The inverse transform (numpy `ifftn`).
    pub fn inverse() -> FftParams {
        FftParams::new(FftDirection::Inverse)
    }

    /// Transform only these axes (numpy's `axes`; each once, in any order). The others are a batch.
    pub fn axes(mut self, axes: &[usize]) -> FftParams {
        self.axes = Some(axes.to_vec());
        self
    }

    /// The normalisation (default [`FftNorm::Backward`]).
    pub fn norm(mut self, norm: FftNorm) -> FftParams {
        self.norm = norm;
        self
    }

    /// Override the planner (default [`FftAlgorithm::Auto`]).
    pub fn algorithm(mut self, algorithm: FftAlgorithm) -> FftParams {
        self.algorithm = algorithm;
        self
    }

    /// The direction.
    pub fn direction(&self) -> FftDirection {
        self.direction
    }
}

/// How [`Fft`](super::Fft) runs the Stockham passes of each axis.
///
/// ```
/// use cliper::{Fft, FftAlgorithm, FftParams, XData};
/// use num_complex::Complex32 as C;
/// let app = cliper::ClApp::new()?;
/// let x = XData::from_slice(&app, &[8], &[C::new(1.0, 0.0); 8])?;
/// let global = Fft::apply(&x, FftParams::forward().algorithm(FftAlgorithm::GlobalPasses))?.to_vec()?;
/// let local = Fft::apply(&x, FftParams::forward().algorithm(FftAlgorithm::LocalMemory))?.to_vec()?;
/// assert!(global.iter().zip(&local).all(|(a, b)| (a - b).norm() < 1e-6)); // the same transform either way
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FftAlgorithm {
    /// [`FftAlgorithm::LocalMemory`] on GPUs, [`FftAlgorithm::Host`] on CPU devices (of the kernels,
    /// PoCL ran the global passes faster: its barriers made 1024² take 47 ms in local memory against 36).
    #[default]
    Auto,
    /// All passes of an axis in one `fft_lines` launch when a line fits a work-group (rows up to 8192 points in
    /// c32 and 4096 in c64; columns while 32 bytes of adjacent columns fit), a four-step split into two such
    /// launches for longer smooth lengths, Bluestein whole in one launch, else one global pass per radix.
    LocalMemory,
    /// One `fft_passR` launch per radix, each reading and writing the whole array (any length).
    GlobalPasses,
    /// On the host's threads in the mapped buffers, through rustfft (`host_transform.rs`): what
    /// [`FftAlgorithm::Auto`] picks on CPU devices, where nothing is copied (PoCL, 2 cores: 250² c32 in 0.23 ms
    /// against 0.81 through the kernels, numpy 0.40). On other devices the mapping copies the arrays to the host
    /// and back.
    Host,
}

/// The transformed axes of `shape` as (outer, n, inner) lines, in `params`' order (default every axis), or an
/// error naming an axis out of range or given twice.
pub(super) fn transformed_axes(shape: &[usize], params: &FftParams) -> Result<Vec<(usize, usize, usize)>> {
    let axes = match &params.axes {
        Some(a) => a.clone(),
        None => (0..shape.len()).collect(),
    };
    let mut transformed = Vec::with_capacity(axes.len());
    for (i, &a) in axes.iter().enumerate() {
        let Some(line) = around(shape, a) else {
            return Err(Error::axis("Fft", a as isize, shape));
        };
        if axes.iter().take(i).any(|&b| b == a) {
            return Err(Error::invalid("Fft", format!("axis {a} is given twice in {axes:?}")));
        }
        transformed.push(line);
    }
    Ok(transformed)
}

/// `shape` around axis `a`: (product of the extents before it, its extent, product of those after it);
/// `None` when the axis does not exist.
fn around(shape: &[usize], a: usize) -> Option<(usize, usize, usize)> {
    let (before, rest) = shape.split_at_checked(a)?;
    let (&n, after) = rest.split_first()?;
    Some((before.iter().product(), n, after.iter().product()))
}

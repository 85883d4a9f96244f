//! What an [`Fft`](super::Fft)'s plan chose, as `Fft::strategy` reports it ([`FftStrategy`]), and its `Display`.

/// How an [`Fft`](super::Fft) computes each transformed axis, as its `strategy()` reports it; `Display` gives one
/// entry per axis, `"; "`-separated (`n=1024: radix 16×8×8 in registers, …`).
///
/// ```
/// use cliper::{Fft, FftAlgorithm, FftParams, Process, XData};
/// let app = cliper::ClApp::new()?;
/// let x = XData::<num_complex::Complex32>::zeros(&app, &[64, 48])?;
/// let kernels = FftParams::forward().algorithm(FftAlgorithm::GlobalPasses); // CPU devices default to the host
/// let mut fft = Fft::new(&x, &XData::zeros(&app, &[64, 48])?, kernels);
/// fft.init()?;
/// let s = fft.strategy().unwrap();
/// assert_eq!(s.axes.len(), 2);
/// assert!(s.to_string().starts_with("n=64: radix")); // one entry per axis, "; "-separated
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FftStrategy {
    /// One entry per transformed axis, in the order they run.
    pub axes: Vec<FftAxisStrategy>,
}

/// How one axis of an [`FftStrategy`] is transformed.
///
/// ```
/// use cliper::{Fft, FftAlgorithm, FftAxisStrategy, FftParams, Process, XData};
/// use num_complex::Complex64 as C;
/// let app = cliper::ClApp::new()?;
/// let x = XData::<C>::zeros(&app, &[97])?; // a prime length
/// let kernels = FftParams::forward().algorithm(FftAlgorithm::GlobalPasses);
/// let mut fft = Fft::new(&x, &XData::zeros(&app, &[97])?, kernels);
/// fft.init()?;
/// assert!(matches!(fft.strategy().unwrap().axes[0], FftAxisStrategy::Bluestein { n: 97, .. }));
/// let mut host = Fft::new(&x, &XData::zeros(&app, &[97])?, FftParams::forward().algorithm(FftAlgorithm::Host));
/// host.init()?;
/// assert_eq!(host.strategy().unwrap().to_string(), "n=97: rustfft on the host's threads");
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FftAxisStrategy {
    /// Stockham passes over the axis's length `n`.
    Stockham {
        /// The length.
        n: usize,
        /// The passes.
        passes: FftPasses,
    },
    /// Bluestein's algorithm: the length-`n` transform as a convolution of length `m` (a smooth length).
    Bluestein {
        /// The length.
        n: usize,
        /// The convolution length.
        m: usize,
        /// The passes of each length-`m` transform.
        passes: FftPasses,
        /// Whether columns go through a transpose to rows and back.
        transposed: bool,
    },
    /// A long axis split `n = n1·n2`: columns of `[n1, n2]`, twiddles, then rows.
    FourStep {
        /// The first factor.
        n1: usize,
        /// The second factor.
        n2: usize,
        /// The passes of the first launch.
        first: FftPasses,
        /// The passes of the second launch.
        second: FftPasses,
        /// Whether a transpose follows (rows; columns write their result in place).
        transpose: bool,
    },
    /// On the host's threads in the mapped buffers ([`FftAlgorithm::Host`](super::FftAlgorithm::Host)): rustfft's
    /// plan for the length.
    Host {
        /// The length.
        n: usize,
    },
}

/// The passes of one transform length.
///
/// ```
/// use cliper::{FftAxisStrategy, FftPasses, Process};
/// let app = cliper::ClApp::new()?;
/// let x = cliper::XData::<num_complex::Complex32>::zeros(&app, &[3, 60])?;
/// let params = cliper::FftParams::forward().axes(&[1]).algorithm(cliper::FftAlgorithm::GlobalPasses);
/// let mut fft = cliper::Fft::new(&x, &cliper::XData::zeros(&app, &[3, 60])?, params);
/// fft.init()?;
/// let FftAxisStrategy::Stockham { passes, .. } = &fft.strategy().unwrap().axes[0] else { unreachable!() };
/// let radices = match passes { FftPasses::Global { radices } | FftPasses::Registers { radices, .. } => radices };
/// assert_eq!(radices.iter().product::<usize>(), 60);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FftPasses {
    /// One global `fft_passR` launch per radix.
    Global {
        /// The radices, in order.
        radices: Vec<usize>,
    },
    /// Every pass in one `fft_lines` launch, the data in registers.
    Registers {
        /// The radices, in order.
        radices: Vec<usize>,
        /// Lines per work-group.
        lines_per_group: usize,
        /// Work-items per line.
        items_per_line: usize,
        /// Whether real and imaginary parts are exchanged through local memory in turn.
        split: bool,
    },
}

fn radix_list(radices: &[usize]) -> String {
    radices.iter().map(usize::to_string).collect::<Vec<_>>().join("×")
}

impl std::fmt::Display for FftPasses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FftPasses::Global { radices } => write!(f, "{}", radix_list(radices)),
            FftPasses::Registers { radices, lines_per_group, items_per_line, split } => write!(
                f,
                "{} in registers, {lines_per_group} lines of {items_per_line} work-items per group{}",
                radix_list(radices),
                if *split { ", real and imaginary parts exchanged in turn" } else { "" }
            ),
        }
    }
}

impl std::fmt::Display for FftAxisStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FftAxisStrategy::Stockham { n, passes } => write!(f, "n={n}: radix {passes}"),
            FftAxisStrategy::Bluestein { n, m, passes, transposed } => write!(
                f,
                "n={n}: Bluestein m={m} (radix {passes}{})",
                if *transposed { "; columns transposed to rows and back" } else { "" }
            ),
            FftAxisStrategy::FourStep { n1, n2, first, second, transpose } => write!(
                f,
                "n={}: four-step {n1}×{n2} ({first}; {second}){}",
                n1 * n2,
                if *transpose { " + transpose" } else { "" }
            ),
            FftAxisStrategy::Host { n } => write!(f, "n={n}: rustfft on the host's threads"),
        }
    }
}

impl std::fmt::Display for FftStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let axes: Vec<String> = self.axes.iter().map(ToString::to_string).collect();
        write!(f, "{}", axes.join("; "))
    }
}

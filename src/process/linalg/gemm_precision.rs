//! [`GemmPrecision`]: how exactly the products of [`super::MatMul`] and [`super::MatrixPower`] must be formed
//! in `f32`, which decides whether they may run on TF32 tensor cores.

use crate::error::{Error, Result};

/// The arithmetic an `f32` or `c32` product may use (`c32` ones on tensor cores run as one real `f32` product,
/// [`super::GemmStrategy::RealEmbedding`]). `f64` and `c64` always multiply through IEEE FP64 fused
/// multiply-adds, on FP64 tensor cores or not, so the setting does not change them.
///
/// A precision other than [`GemmPrecision::Full`] is a permission: the product may run on the TF32 tensor-core
/// kernel ([`super::GemmStrategy::TensorCore`], NVIDIA GPUs of compute capability 8.0 or later, or
/// [`super::GemmStrategy::Wgmma`] on Hopper); everywhere else it runs in plain FP32, which is at least as accurate.
/// The planner takes the tensor cores where they are faster: at `Tf32` (H100, 4096³: 100 TF/s against 42 in FP32
/// and cuBLAS's 51; H200 on `wgmma`: 245); at `Fp32Split` only on `wgmma` (H200 4096³: 79.5 TF/s against 42 in
/// FP32 and cuBLAS FP32's 51, at FP32's accuracy), not on the mma.sync kernel, whose
/// three products measured no faster than the FP32 kernel there (42.3 TF/s), so it only runs when
/// [`super::MatMulParams::strategy`] asks for the tensor cores.
///
/// | precision | arithmetic on tensor cores | error per product term | A¹⁰⁰, 4096², positive entries |
/// |---|---|---|---|
/// | `Full` (default) | none: FP32 fused multiply-adds | 2⁻²⁴ (one rounding) | 3.8·10⁻⁶ |
/// | `Fp32Split` | a = a_hi + a_lo, b likewise; a_lo·b_hi + a_hi·b_lo + a_hi·b_hi | ≤ 3·2⁻²⁰ | 4.3·10⁻⁶ |
/// | `Tf32` | tf32(a)·tf32(b) | ≤ 2⁻¹⁰ + 2⁻²² | 2.8·10⁻³ |
///
/// (The last column: max |Δ| / max |A¹⁰⁰| against float64 on the H100.) In all three the sum over K accumulates
/// in FP32; `Fp32Split` rounds its sums to nearest like FP32, while `Tf32` accumulates inside the tensor cores,
/// whose truncation biases sums of like-signed terms toward zero (hence its larger error in iterated products).
/// TF32 keeps FP32's exponent range, except that values within 2⁻¹² of f32's largest finite value round to
/// infinity.
///
/// ```
/// use cliper::{GemmPrecision, MatMul, MatMulParams, XData};
/// let app = cliper::ClApp::new()?;
/// let a = XData::from_slice(&app, &[2, 2], &[1.0f32, 2.0, 3.0, 4.0])?;
/// let params = MatMulParams::default().precision(GemmPrecision::Fp32Split);
/// assert_eq!(MatMul::apply(&a, &a, params)?.to_vec()?, vec![7.0, 10.0, 15.0, 22.0]);
/// assert_eq!("tf32".parse::<GemmPrecision>()?, GemmPrecision::Tf32);
/// assert_eq!(GemmPrecision::Fp32Split.to_string(), "fp32-split");
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GemmPrecision {
    /// Plain FP32 arithmetic (the default).
    #[default]
    Full,
    /// FP32-level accuracy from three TF32 tensor-core products per term (the "3xTF32" split); the bound on the
    /// error stays of FP32's form: `(K + 50)·2⁻²⁴·|A||B|` against FP32's `(K + 2)·2⁻²⁴·|A||B|`.
    Fp32Split,
    /// One TF32 product per term: operands rounded to 10 mantissa bits, up to 10⁻³ relative error per term, the
    /// fastest (as cuBLAS and PyTorch with TF32 allowed).
    Tf32,
}

impl GemmPrecision {
    /// Whether an `f32` product at this precision may run on TF32 tensor cores.
    pub fn allows_tf32(self) -> bool {
        self != GemmPrecision::Full
    }
}

impl std::fmt::Display for GemmPrecision {
    /// `full`, `fp32-split` or `tf32`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            GemmPrecision::Full => "full",
            GemmPrecision::Fp32Split => "fp32-split",
            GemmPrecision::Tf32 => "tf32",
        })
    }
}

impl std::str::FromStr for GemmPrecision {
    type Err = Error;

    /// The [`std::fmt::Display`] form back; an unknown name is an error that lists the three.
    ///
    /// ```
    /// let err = "half".parse::<cliper::GemmPrecision>().unwrap_err().to_string();
    /// assert!(err.contains("half") && err.contains("fp32-split"), "{err}");
    /// ```
    fn from_str(text: &str) -> Result<GemmPrecision> {
        match text.trim() {
            "full" | "fp32" => Ok(GemmPrecision::Full),
            "fp32-split" | "3xtf32" => Ok(GemmPrecision::Fp32Split),
            "tf32" => Ok(GemmPrecision::Tf32),
            other => Err(Error::invalid(
                "GemmPrecision",
                format!("unknown precision {other:?}: expected full, fp32-split or tf32"),
            )),
        }
    }
}

//! Matrix products (the linalg family): `matmul` over the last two axes and the `power` of square matrices. Their
//! results have no voxel grid.

use super::operation::{Inputs, Named, Operation, Planned};
use super::reach::Reach;
use super::reach::whole;
use crate::Result;
use crate::chain::any_data::{AnyData, Kind, dispatch};
use crate::prelude::*;
use serde::Deserialize;

/// Matrix product op(A)·op(B) over the last two axes.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'matmul'")?;
/// assert_eq!(step.name(), "matmul");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper matmul data/matrices.mat:A data/matrices.mat:B out/c.npy")]
#[serde(deny_unknown_fields)]
pub struct MatmulArgs {
    /// Transpose A.
    #[arg(long)]
    #[serde(default)]
    pub ta: bool,
    /// Transpose B.
    #[arg(long)]
    #[serde(default)]
    pub tb: bool,
    /// Conjugate-transpose A (Aᴴ; the transpose for real data).
    #[arg(long, conflicts_with = "ta")]
    #[serde(default)]
    pub ha: bool,
    /// Conjugate-transpose B.
    #[arg(long, conflicts_with = "tb")]
    #[serde(default)]
    pub hb: bool,
    /// How exactly f32 products are formed: full, fp32-split or tf32 (TF32 tensor cores where the device has
    /// them). Not the pipeline's `precision`, which picks single or double data.
    #[arg(long, default_value = "full")]
    #[serde(default)]
    pub gemm_precision: GemmPrecision,
}

impl Named for MatmulArgs {
    const NAME: &'static str = "matmul";
    const INPUTS: Inputs = Inputs {
        names: &[("A", "Left operand"), ("B", "Right operand")],
        variadic: false,
        optional: false,
        prints: false,
    };
}

impl MatmulArgs {
    /// `op(a)` of one operand from its transpose and conjugate-transpose flags.
    fn mat_op((t, h): (bool, bool), name: &str) -> Result<MatOp> {
        match (t, h) {
            (true, true) => Err(Error::invalid(Self::NAME, format!("t{name} and h{name} both given: pick one"))),
            (true, false) => Ok(MatOp::Transpose),
            (false, true) => Ok(MatOp::ConjTranspose),
            (false, false) => Ok(MatOp::None),
        }
    }
}

impl Operation for MatmulArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        fn typed<T: Kind>(a: &XData<T>, b: &XData<T>, ops: [MatOp; 2], precision: GemmPrecision) -> Result<Planned> {
            let params = MatMulParams::default().op_a(ops[0]).op_b(ops[1]).precision(precision);
            let c = XData::<T>::zeros(a.app(), &MatMul::output_shape(a.shape(), b.shape(), &params)?)?;
            Ok((Box::new(MatMul::new(a, b, &c, params)), T::wrap(c)))
        }
        let ops = [Self::mat_op((self.ta, self.ha), "a")?, Self::mat_op((self.tb, self.hb), "b")?];
        let precision = self.gemm_precision;
        super::reduce::same_kind(Self::NAME, inputs, |a, b| match (a, b) {
            (AnyData::F32(a), AnyData::F32(b)) => typed(a, b, ops, precision),
            (AnyData::F64(a), AnyData::F64(b)) => typed(a, b, ops, precision),
            (AnyData::C32(a), AnyData::C32(b)) => typed(a, b, ops, precision),
            (AnyData::C64(a), AnyData::C64(b)) => typed(a, b, ops, precision),
            _ => Err(Error::invalid(Self::NAME, "takes two inputs")),
        })
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "is a matrix product"))
    }
    fn geometry(&self, _: &Geometry, _: &[usize], _: &[usize], _: bool) -> Option<Geometry> {
        None
    }
}

/// The N-th power of square matrices.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'power'\nn = 3")?;
/// assert_eq!(step.name(), "power");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper power out/c.npy 8 out/c8.npy")]
#[serde(deny_unknown_fields)]
pub struct PowerArgs {
    /// The exponent.
    pub n: u64,
    /// How exactly f32 products are formed: full, fp32-split or tf32 (TF32 tensor cores where the device has
    /// them).
    #[arg(long, default_value = "full")]
    #[serde(default)]
    pub gemm_precision: GemmPrecision,
}

impl Named for PowerArgs {
    const NAME: &'static str = "power";
}

impl Operation for PowerArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        fn typed<T: Kind>(x: &XData<T>, n: u64, precision: GemmPrecision) -> Result<Planned> {
            let y = XData::<T>::zeros(x.app(), &MatrixPower::<T>::output_shape(x.shape())?)?;
            Ok((Box::new(MatrixPower::new(x, &y, n).precision(precision)), T::wrap(y)))
        }
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        dispatch!(x, x => typed(x, self.n, self.gemm_precision))
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "is a matrix product"))
    }
    fn geometry(&self, _: &Geometry, _: &[usize], _: &[usize], _: bool) -> Option<Geometry> {
        None
    }
}

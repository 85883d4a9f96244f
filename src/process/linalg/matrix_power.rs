//! [`MatrixPower`]: `A^n` by binary exponentiation.

use super::gemm_precision::GemmPrecision;
use super::gemm_strategy::GemmStrategy;
use super::matmul::{MatMul, MatMulParams};
use crate::app::Kernel;
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::layout::{CopyPlan, CopyStrategy};
use crate::process::planning::Batch3;
use crate::process::{Prepared, Process};

/// `A^n` for a square matrix (or a batch of them, shape `[batch…, s, s]`), real or complex, any `n ≥ 0`:
/// `n = 0` writes the identity, `n = 1` a copy.
///
/// Binary exponentiation: ⌊log2 n⌋ squarings and popcount(n) − 1 further products ([`MatMul`]s), instead of
/// the n − 1 products of the naive loop (100 → 8 products). Intermediate powers ping-pong between at most
/// three scratch arrays allocated in `init` (only as many as the exponent needs); the last product writes
/// straight into the output, so there are no device-to-device copies.
///
/// ```
/// use cliper::{ClApp, MatrixPower, PowerStrategy, Process, XData};
/// let app = ClApp::new()?;
/// let a = XData::from_slice(&app, &[2, 2], &[1.0f64, 1.0, 1.0, 0.0])?; // Fibonacci matrix
/// let a10 = MatrixPower::apply(&a, 10)?;
/// assert_eq!(a10.to_vec()?, vec![89.0, 55.0, 55.0, 34.0]);
/// let mut p = MatrixPower::new(&a, &XData::zeros(&app, &[2, 2])?, 100);
/// p.init()?;
/// let Some(PowerStrategy::Products { products, .. }) = p.strategy() else { unreachable!() };
/// assert_eq!(products, 8); // 6 squarings + 2 products
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct MatrixPower<T: Element> {
    a: XData<T>,
    out: XData<T>,
    n: u64,
    precision: GemmPrecision,
    plan: Prepared<Plan<T>>,
}

/// How a [`MatrixPower`] computes `A^n`, as its `strategy()` reports it.
///
/// ```
/// use cliper::{MatrixPower, PowerStrategy, Process, XData};
/// let app = cliper::ClApp::new()?;
/// let a = XData::<f64>::zeros(&app, &[3, 3])?;
/// let mut p = MatrixPower::new(&a, &XData::zeros(&app, &[3, 3])?, 0);
/// p.init()?;
/// assert_eq!(p.strategy(), Some(PowerStrategy::Identity));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PowerStrategy {
    /// `n = 0`: the identity, written by one kernel.
    Identity,
    /// `n = 1`: a copy of `A`.
    Copy(CopyStrategy),
    /// `n ≥ 2`: this many matrix products (⌊log2 n⌋ squarings and popcount(n) − 1 more), the first with this
    /// kernel.
    Products {
        /// Products per launch.
        products: usize,
        /// The first product's kernel (all have the same shape).
        gemm: GemmStrategy,
    },
}

impl std::fmt::Display for PowerStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PowerStrategy::Identity => write!(f, "identity"),
            PowerStrategy::Copy(c) => write!(f, "copy ({c})"),
            PowerStrategy::Products { products, gemm } => write!(f, "{products} products ({gemm})"),
        }
    }
}

enum Plan<T: Element> {
    Identity { kernel: Kernel, index: IndexType, size: usize, batch: Batch3, count: usize },
    Copy(CopyPlan),
    Products(Vec<MatMul<T>>),
}

/// Where an intermediate power lives.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Slot {
    Input,
    Scratch(usize),
    Output,
}

/// The products of binary exponentiation as (left, right, destination) slots. At most three scratch slots are
/// used; the last product lands in the output.
fn schedule(n: u64) -> Vec<(Slot, Slot, Slot)> {
    let total = (63 - n.leading_zeros() as usize) + n.count_ones() as usize - 1;
    let mut steps = Vec::with_capacity(total);
    let (mut power, mut result): (Slot, Option<Slot>) = (Slot::Input, None);
    let dest = |live: [Option<Slot>; 2], steps: &Vec<(Slot, Slot, Slot)>| {
        if steps.len() + 1 == total {
            Slot::Output
        } else {
            (0..3).map(Slot::Scratch).find(|s| !live.contains(&Some(*s))).unwrap_or(Slot::Output)
        }
    };
    let mut bits = n;
    loop {
        if bits & 1 == 1 {
            result = Some(match result {
                None => power,
                Some(r) => {
                    let d = dest([Some(r), Some(power)], &steps);
                    steps.push((r, power, d));
                    d
                }
            });
        }
        bits >>= 1;
        if bits == 0 {
            break;
        }
        let d = dest([Some(power), result], &steps);
        steps.push((power, power, d));
        power = d;
    }
    steps
}

impl<T: Element> MatrixPower<T> {
    /// `out = a^n` (same shape as `a`).
    pub fn new(a: &XData<T>, out: &XData<T>, n: u64) -> MatrixPower<T> {
        MatrixPower { a: a.clone(), out: out.clone(), n, precision: GemmPrecision::Full, plan: Prepared::default() }
    }

    /// The precision of the products ([`MatMulParams::precision`]): for `f32`, [`GemmPrecision::Tf32`] lets them
    /// run on TF32 tensor cores where the device has them (H100, A¹⁰⁰ of 4096²: 11.0 ms against 26.2 in FP32,
    /// 2.8·10⁻³ from float64 against 3.8·10⁻⁶).
    ///
    /// ```
    /// use cliper::{GemmPrecision, MatrixPower, Process, XData};
    /// let app = cliper::ClApp::new()?;
    /// let a = XData::from_slice(&app, &[2, 2], &[1.0f32, 1.0, 1.0, 0.0])?;
    /// let out = XData::zeros(&app, &[2, 2])?;
    /// MatrixPower::new(&a, &out, 10).precision(GemmPrecision::Fp32Split).run()?;
    /// assert_eq!(out.to_vec()?, vec![89.0, 55.0, 55.0, 34.0]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn precision(mut self, precision: GemmPrecision) -> Self {
        self.precision = precision;
        self
    }

    /// Allocates the output, computes `a^n` into it once and returns it.
    pub fn apply(a: &XData<T>, n: u64) -> Result<XData<T>> {
        let out = XData::uninit(a.app(), "MatrixPower", &Self::output_shape(a.shape())?)?;
        MatrixPower::new(a, &out, n).run()?;
        Ok(out)
    }

    /// The output shape (whatever the exponent): the input's, which must be a (batch of) square matrices.
    ///
    /// ```
    /// use cliper::MatrixPower;
    /// assert_eq!(MatrixPower::<f32>::output_shape(&[4, 3, 3])?, vec![4, 3, 3]);
    /// assert!(MatrixPower::<f32>::output_shape(&[3, 2]).unwrap_err().to_string().contains("square"));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize]) -> Result<Vec<usize>> {
        square("MatrixPower", shape)?;
        Ok(shape.to_vec())
    }

    /// How `init` planned the power; `None` before `init`.
    pub fn strategy(&self) -> Option<PowerStrategy> {
        self.plan.as_ref().map(|p| match p {
            Plan::Identity { .. } => PowerStrategy::Identity,
            Plan::Copy(c) => PowerStrategy::Copy(c.strategy()),
            Plan::Products(steps) => PowerStrategy::Products {
                products: steps.len(),
                gemm: steps.first().and_then(MatMul::strategy).unwrap_or(GemmStrategy::Direct),
            },
        })
    }

    fn plan(&self) -> Result<Plan<T>> {
        let op = "MatrixPower";
        let shape = self.a.shape();
        let (batch_shape, size) = square(op, shape)?;
        if self.out.shape() != shape {
            return Err(Error::shape(op, shape, self.out.shape()));
        }
        if self.out.overlaps(&self.a) {
            return Err(Error::invalid(op, "the output overlaps the input; A^n needs a separate output"));
        }
        let app = self.out.app();
        if !self.a.app().same_as(app) {
            return Err(Error::invalid(op, "input and output belong to different ClApps (devices)"));
        }
        match self.n {
            0 => {
                let out = &self.out;
                let extent = out.layout().span().map_or(0, |(_, hi)| hi as u64 + 1);
                let index = IndexType::for_extent(extent);
                let options = format!("{} -DIDX={}", T::build_options(), index.cl_type());
                let program = app.build_program("linalg.cl", &kernels::with_common(kernels::LINALG), &options)?;
                let [batch_strides @ .., _, _] = out.strides() else {
                    let strides = out.strides();
                    return Err(Error::invalid(
                        op,
                        format!("output strides {strides:?} lack the matrix axes of {shape:?}"),
                    ));
                };
                let batch = Batch3::new(op, batch_shape, [batch_strides, batch_strides, batch_strides])?;
                let kernel = program.kernel("set_identity")?.owned_by(op);
                Ok(Plan::Identity { kernel, index, size, batch, count: batch.count() as usize })
            }
            1 => Ok(Plan::Copy(CopyPlan::new(op, &self.a, &self.out, false, None)?)),
            n => {
                let mut scratch: Vec<Option<XData<T>>> = vec![None, None, None];
                let mut array = |slot: Slot| -> Result<XData<T>> {
                    Ok(match slot {
                        Slot::Input => self.a.clone(),
                        Slot::Output => self.out.clone(),
                        Slot::Scratch(k) => {
                            let count = scratch.len();
                            let Some(cell) = scratch.get_mut(k) else {
                                return Err(Error::invalid(op, format!("the schedule names scratch {k} of {count}")));
                            };
                            match cell {
                                Some(x) => x.clone(),
                                None => cell.insert(XData::uninit(app, op, shape)?).clone(),
                            }
                        }
                    })
                };
                let mut steps = Vec::new();
                // Complex products run as real ones share one expanded operand (each would take twice A's bytes).
                let mut shared = None;
                for (l, r, d) in schedule(n) {
                    let params = MatMulParams::default().precision(self.precision);
                    let mut product =
                        MatMul::new(&array(l)?, &array(r)?, &array(d)?, params).sharing_scratch(shared.clone());
                    product.init()?;
                    shared = product.embedding_scratch().or(shared);
                    steps.push(product);
                }
                Ok(Plan::Products(steps))
            }
        }
    }
}

/// The batch axes and the side of `[batch…, s, s]`, or an error naming the shape that is not square.
fn square<'a>(op: &str, shape: &'a [usize]) -> Result<(&'a [usize], usize)> {
    match shape {
        [batch @ .., rows, cols] if rows == cols => Ok((batch, *cols)),
        [batch @ .., rows, _] => {
            Err(Error::shape_because(op, &[batch, &[*rows; 2]].concat(), shape, "square matrices"))
        }
        _ => Err(Error::shape_rule(op, "[s, s] or [batch…, s, s]", shape)),
    }
}

impl<T: Element> Process for MatrixPower<T> {
    fn name(&self) -> &str {
        "MatrixPower"
    }

    fn init(&mut self) -> Result<()> {
        self.plan.set(self.plan()?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("MatrixPower")?;
        match plan {
            Plan::Identity { kernel, index, size, batch, count } => {
                let out = &self.out;
                let [.., row_stride, col_stride] = *out.strides() else {
                    let (shape, strides) = (out.shape(), out.strides());
                    return Err(Error::invalid(
                        "MatrixPower",
                        format!("the output of shape {shape:?} (strides {strides:?}) has no matrix axes"),
                    ));
                };
                let (s, idx) = (*size, *index);
                let local = s.next_power_of_two().clamp(1, 16);
                kernel
                    .launch()
                    .output("out", out)
                    .index("off", idx, out.offset() as u64)
                    .index("n", idx, s as u64)
                    .index("sr", idx, row_stride as u64)
                    .index("sc", idx, col_stride as u64)
                    .scalar("nd", batch.axes)
                    .scalar("shape", batch.shape)
                    .scalar("batch_out", batch.strides[0])
                    .global(&[s.div_ceil(local) * local, s.div_ceil(local) * local, *count])
                    .local(&[local, local, 1])
                    .work((s * s * *count * std::mem::size_of::<T>()) as u64, 0)
                    .enqueue()
            }
            Plan::Copy(copy) => copy.launch("MatrixPower", &self.a, &self.out),
            Plan::Products(steps) => steps.iter_mut().try_for_each(|p| p.launch()),
        }
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_counts_and_slots() {
        for n in 2..300u64 {
            let steps = schedule(n);
            let expected = (63 - n.leading_zeros() as usize) + n.count_ones() as usize - 1;
            assert_eq!(steps.len(), expected, "n = {n}");
            // Only the last product writes the output; nothing reads a slot in the product that writes it.
            for (i, &(l, r, d)) in steps.iter().enumerate() {
                assert_eq!(d == Slot::Output, i + 1 == steps.len(), "n = {n}, step {i}");
                assert!(d != l && d != r && d != Slot::Input, "n = {n}, step {i}: {l:?}·{r:?} → {d:?}");
            }
        }
        assert_eq!(schedule(2), vec![(Slot::Input, Slot::Input, Slot::Output)]);
    }

    /// Follows the schedule on exponents instead of matrices: the output must end up holding exactly n.
    #[test]
    fn schedule_computes_the_power() {
        for n in 2..600u64 {
            let mut held = std::collections::HashMap::from([(Slot::Input, 1u64)]);
            for (l, r, d) in schedule(n) {
                let e = held[&l] + held[&r];
                held.insert(d, e);
            }
            assert_eq!(held[&Slot::Output], n, "n = {n}");
        }
    }
}

//! [`Reduction`]: what a reduction computes, shared by the kernels' planner (`reduce_plan.rs`) and the host's
//! loops (`host_reduce.rs`).

/// What is reduced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Reduction {
    /// `‖x‖_p`; `p` is ≥ 1 or +∞.
    Norm { p: f64 },
    /// `Σ op(x)·y`, `op` the complex conjugate when `conjugate_x`.
    Dot { conjugate_x: bool },
}

impl Reduction {
    /// The build options that select it in `kernels/reduce.cl`.
    pub(crate) fn options(&self) -> String {
        match *self {
            Reduction::Norm { p } => {
                let kind = if p == 1.0 {
                    1
                } else if p == 2.0 {
                    2
                } else if p.is_infinite() {
                    5
                } else if p.fract() == 0.0 && p <= i32::MAX as f64 {
                    3
                } else {
                    4
                };
                // Small integer p is compiled in, so its powers unroll into a few multiplies.
                let ip = if kind == 3 && p <= 64.0 { format!(" -DIP={p}") } else { String::new() };
                format!("-DOP_NORM=1 -DP_KIND={kind} -DCONJ_X=0{ip}")
            }
            Reduction::Dot { conjugate_x } => format!("-DOP_NORM=0 -DP_KIND=0 -DCONJ_X={}", u8::from(conjugate_x)),
        }
    }

    /// Elements of the output type in one partial: norms carry (scale, sum) pairs.
    pub(crate) fn partial_width(&self) -> usize {
        match self {
            Reduction::Norm { .. } => 2,
            Reduction::Dot { .. } => 1,
        }
    }
}

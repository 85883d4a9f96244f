//! The OpenCL source of one [`Expr`] kernel: the expressions of every output, typed (real or complex per node),
//! common subexpressions computed once, constants as kernel arguments, and the index arithmetic of the
//! operands' merged axes written out (strides of 0 and 1 as literals, others as arguments). The source depends
//! on the expressions' shape and the operands' layout class only, so one program serves every size and every
//! value of the constants.

use super::expr::{BinaryOp, Expr, UnaryOp};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::fmt::Write;

/// Whether a value in the kernel is real (`R`) or complex (`T`, only when the element type is complex).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ty {
    Real,
    Complex,
}

/// How an operand's offset changes along one merged axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Step {
    /// Broadcast: the same element all along.
    Zero,
    /// The next element.
    One,
    /// A stride passed as an argument.
    Var,
}

impl Step {
    pub(super) fn of(stride: usize) -> Step {
        match stride {
            0 => Step::Zero,
            1 => Step::One,
            _ => Step::Var,
        }
    }
}

/// What the generator needs beyond the expressions.
pub(super) struct KernelShape<'a> {
    /// Complex element type (`T` is float2/double2).
    pub complex: bool,
    /// Each input's steps along the merged axes (outermost first).
    pub inputs: &'a [Vec<Step>],
    /// Each output's steps, and whether it is of the real type `R` (else `T`).
    pub outputs: &'a [(Vec<Step>, bool)],
    /// Every operand is contiguous with an offset that is a multiple of 4: four elements per work-item.
    pub vector: bool,
}

/// The generated kernel `expression` and the constants, in the order of its `c*` arguments.
pub(super) struct Generated {
    pub source: String,
    pub constants: Vec<f64>,
}

/// The expressions' code in `g` and the value of each, typed for its output (`real_outputs[k]`: of `R`).
fn roots(g: &mut Gen, exprs: &[&Expr], real_outputs: &[bool]) -> Result<Vec<String>> {
    let mut roots = Vec::new();
    for (k, e) in exprs.iter().enumerate() {
        let (var, ty) = g.node(e)?;
        let real_out = real_outputs.get(k).copied().unwrap_or(false);
        let value = match (ty, real_out, g.complex) {
            (Ty::Complex, true, _) => {
                return Err(Error::invalid(
                    g.op,
                    format!(
                        "`{e}` is complex and the output is real: take abs, real, imag or angle of it, or give a \
                         complex output"
                    ),
                ));
            }
            (Ty::Real, false, true) => format!("(T)({var}, (R)0)"),
            _ => var,
        };
        roots.push(value);
    }
    Ok(roots)
}

/// The helpers the generated code calls.
fn helpers(complex: bool) -> String {
    let mut src = String::from(REAL_HELPERS);
    if complex {
        src.push_str(COMPLEX_HELPERS);
    }
    src
}

/// Generates the kernel computing `exprs[k]` into output `k`; the name `op` is for errors.
pub(super) fn generate(op: &str, exprs: &[&Expr], shape: &KernelShape) -> Result<Generated> {
    let mut g = Gen::new(op, shape.complex, shape.inputs.len());
    let real_outputs: Vec<bool> = shape.outputs.iter().map(|o| o.1).collect();
    let roots = roots(&mut g, exprs, &real_outputs)?;
    let nd = shape.outputs.first().map_or(1, |o| o.0.len()).max(1);
    let mut src = helpers(shape.complex);
    // The signature: inputs, outputs, constants, the count and the extents of the inner merged axes.
    let mut args = Vec::new();
    let strides = |name: &str, steps: &[Step], args: &mut Vec<String>| {
        for (a, s) in steps.iter().enumerate() {
            if *s == Step::Var {
                args.push(format!("IDX {name}_s{a}"));
            }
        }
    };
    for (k, steps) in shape.inputs.iter().enumerate() {
        args.push(format!("global const T* in{k}"));
        args.push(format!("IDX in{k}_off"));
        strides(&format!("in{k}"), steps, &mut args);
    }
    for (k, (steps, real)) in shape.outputs.iter().enumerate() {
        args.push(format!("global {}* out{k}", if *real { "R" } else { "T" }));
        args.push(format!("IDX out{k}_off"));
        strides(&format!("out{k}"), steps, &mut args);
    }
    for c in 0..g.constants.len() {
        args.push(format!("R c{c}"));
    }
    args.push("IDX count".into());
    for a in 1..nd {
        args.push(format!("IDX n{a}"));
    }
    let _ = writeln!(src, "kernel void expression({}) {{", args.join(", "));
    let vector = shape.vector && !shape.complex && nd == 1;
    if vector {
        // Four elements per work-item through 16- or 32-byte loads and stores (the host checked that every
        // operand is contiguous and its offset a multiple of 4): the expression written out once per lane.
        src.push_str("#if IS_DOUBLE\n#define T4 double4\n#else\n#define T4 float4\n#endif\n");
        src.push_str("    const IDX quads = count / 4;\n");
        src.push_str("    for (IDX q = get_global_id(0); q < quads; q += get_global_size(0)) {\n");
        for (k, _) in shape.inputs.iter().enumerate().filter(|(k, _)| g.used.get(*k).copied().unwrap_or(false)) {
            let _ = writeln!(src, "        const T4 a{k} = ((global const T4*)(in{k} + in{k}_off))[q];");
        }
        for k in 0..roots.len() {
            let _ = writeln!(src, "        T4 r{k};");
        }
        for lane in 0..4 {
            src.push_str("        {\n");
            for (k, _) in shape.inputs.iter().enumerate().filter(|(k, _)| g.used.get(*k).copied().unwrap_or(false)) {
                let _ = writeln!(src, "        const T x{k} = a{k}.s{lane};");
            }
            src.push_str(&g.lines);
            for (k, value) in roots.iter().enumerate() {
                let _ = writeln!(src, "        r{k}.s{lane} = {value};");
            }
            src.push_str("        }\n");
        }
        for k in 0..roots.len() {
            let _ = writeln!(src, "        ((global T4*)(out{k} + out{k}_off))[q] = r{k};");
        }
        src.push_str("    }\n");
        // The last count % 4 elements, one per work-item, by the loop below.
        src.push_str("    for (IDX b = quads * 4 + get_global_id(0); b < count; b += get_global_size(0)) {\n");
    } else {
        src.push_str("    for (IDX b = get_global_id(0); b < count; b += get_global_size(0)) {\n");
    }
    // The index along each merged axis, innermost last.
    if nd > 1 {
        src.push_str("        IDX rest = b;\n");
        for a in (1..nd).rev() {
            let _ = writeln!(src, "        const IDX i{a} = rest % n{a};\n        rest /= n{a};");
        }
        src.push_str("        const IDX i0 = rest;\n");
    } else {
        src.push_str("        const IDX i0 = b;\n");
    }
    let offset = |name: &str, steps: &[Step]| {
        let terms: Vec<String> = steps
            .iter()
            .enumerate()
            .filter_map(|(a, s)| match s {
                Step::Zero => None,
                Step::One => Some(format!("i{a}")),
                Step::Var => Some(format!("i{a} * {name}_s{a}")),
            })
            .collect();
        if terms.is_empty() { format!("{name}_off") } else { format!("{name}_off + {}", terms.join(" + ")) }
    };
    for (k, steps) in shape.inputs.iter().enumerate() {
        if g.used.get(k).copied().unwrap_or(false) {
            let _ = writeln!(src, "        const T x{k} = in{k}[{}];", offset(&format!("in{k}"), steps));
        }
    }
    src.push_str(&g.lines);
    for (k, ((steps, _), value)) in shape.outputs.iter().zip(&roots).enumerate() {
        let _ = writeln!(src, "        out{k}[{}] = {value};", offset(&format!("out{k}"), steps));
    }
    src.push_str("    }\n}\n");
    Ok(Generated { source: src, constants: g.constants })
}

/// Generates `epilogue`, the expressions `exprs` computed after a stencil kernel stores an element (a
/// [`crate::Pipeline`] fused the element-wise stages after it into that kernel): input 0 is the value just stored,
/// passed in a register; inputs 1.. and the outputs are arrays laid out as the stencil's output, read and
/// written at the same element, `at` elements past their offsets. Output `k` is of `R` when `real_outputs[k]`,
/// else `T`. The source defines, besides the function, the macros the stencil's program reads:
/// `EPILOGUE_PARAMS`, the kernel parameters to append (`ein{k}`, `ein{k}_off` for inputs 1.., `eout{k}`,
/// `eout{k}_off`, `ec{i}` for the constants), and `EPILOGUE(at, v)`, the call.
pub(super) fn generate_epilogue(
    op: &str,
    exprs: &[&Expr],
    complex: bool,
    inputs: usize,
    real_outputs: &[bool],
) -> Result<Generated> {
    let inputs = inputs.max(1);
    let mut g = Gen::new(op, complex, inputs);
    let roots = roots(&mut g, exprs, real_outputs)?;
    let mut src = helpers(complex);
    let (mut params, mut kernel_params, mut pass) = (
        vec!["const IDX at".to_string(), "const T x0".to_string()],
        Vec::new(),
        vec!["(at)".to_string(), "(v)".to_string()],
    );
    for k in 1..inputs {
        params.push(format!("global const T* in{k}, const IDX in{k}_off"));
        kernel_params.push(format!("global const T* ein{k}, IDX ein{k}_off"));
        pass.push(format!("ein{k}, ein{k}_off"));
    }
    for (k, real) in real_outputs.iter().enumerate() {
        let ty = if *real { "R" } else { "T" };
        params.push(format!("global {ty}* out{k}, const IDX out{k}_off"));
        kernel_params.push(format!("global {ty}* eout{k}, IDX eout{k}_off"));
        pass.push(format!("eout{k}, eout{k}_off"));
    }
    for c in 0..g.constants.len() {
        params.push(format!("const R c{c}"));
        kernel_params.push(format!("R ec{c}"));
        pass.push(format!("ec{c}"));
    }
    // One element's work: the inputs read past the stencil's value (at `element`), the expressions, and `store`
    // of each output's value.
    let body = |element: &str, store: &dyn Fn(usize, &str) -> String| {
        let mut text = String::new();
        for k in (1..inputs).filter(|&k| g.used.get(k).copied().unwrap_or(false)) {
            let _ = writeln!(text, "        const T x{k} = in{k}[in{k}_off + {element}];");
        }
        text.push_str(&g.lines);
        for (k, value) in roots.iter().enumerate() {
            let _ = writeln!(text, "        {};", store(k, value));
        }
        text
    };
    let _ = writeln!(src, "inline void epilogue({}) {{", params.join(", "));
    src.push_str(&body("at", &|k, value| format!("out{k}[out{k}_off + at] = {value}")));
    src.push_str("}\n#define HAS_EPILOGUE 1\n");
    let _ = writeln!(src, "#define EPILOGUE_PARAMS , {}", kernel_params.join(", "));
    let _ = writeln!(src, "#define EPILOGUE(at, v) epilogue({})", pass.join(", "));
    // Where the stencil stores VW elements as one vector (`Run`, -DVT), `epilogue_run` does the same for the
    // outputs (when every one is of T): per-lane scalar stores left PoCL's vectorised kernel 30 % slower than
    // the stencil and a separate element-wise kernel together (2048² Laplacian, 2 cores).
    if !real_outputs.iter().any(|&r| r && complex) {
        src.push_str("#ifdef VT\n");
        let run_params: Vec<&str> = params.iter().skip(2).map(String::as_str).collect();
        let _ = writeln!(src, "inline void epilogue_run(const IDX at, const Run v, {}) {{", run_params.join(", "));
        for k in 0..roots.len() {
            let _ = writeln!(src, "    Run r{k};");
        }
        src.push_str(
            "    #pragma unroll\n    for (int lane = 0; lane < VW; ++lane) {\n        const T x0 = v.s[lane];\n",
        );
        src.push_str(&body("at + lane", &|k, value| format!("r{k}.s[lane] = {value}")));
        src.push_str("    }\n");
        for k in 0..roots.len() {
            let _ = writeln!(src, "    *(global VT*)(out{k} + out{k}_off + at) = r{k}.v;");
        }
        src.push_str("}\n#define HAS_EPILOGUE_RUN 1\n");
        let run_pass: Vec<&str> = pass.iter().skip(2).map(String::as_str).collect();
        let _ = writeln!(src, "#define EPILOGUE_RUN(at, run) epilogue_run((at), (run), {})", run_pass.join(", "));
        src.push_str("#endif\n");
    }
    Ok(Generated { source: src, constants: g.constants })
}

/// Real functions the generated code calls.
const REAL_HELPERS: &str = r"
// hypot without its cost where nothing can overflow or underflow: sqrt(a² + b²) is within 1.5 ulp there (the
// builtin is allowed 4 and is a slow library call on CPUs: 21 ns per element on PoCL against 2 for this); the
// builtin takes the rest (a sum that is infinite, NaN or below the smallest normal number, except exact zeros).
#if IS_DOUBLE
#define SMALLEST_NORMAL DBL_MIN
#else
#define SMALLEST_NORMAL FLT_MIN
#endif
inline R fast_hypot(R a, R b) {
    const R t = a * a + b * b;
    return ((isfinite(t) && t >= SMALLEST_NORMAL) || (a == (R)0 && b == (R)0)) ? sqrt(t) : hypot(a, b);
}
";

/// Complex arithmetic the generated code calls (only in complex programs).
const COMPLEX_HELPERS: &str = r"
inline T c_mul(T a, T b) { return (T)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
// Smith's division: no overflow of |b|^2 for large b.
inline T c_div(T a, T b) {
    if (fabs(b.x) >= fabs(b.y)) {
        const R r = b.y / b.x, d = b.x + b.y * r;
        return (T)((a.x + a.y * r) / d, (a.y - a.x * r) / d);
    }
    const R r = b.x / b.y, d = b.x * r + b.y;
    return (T)((a.x * r + a.y) / d, (a.y * r - a.x) / d);
}
inline T c_exp(T a) { const R m = exp(a.x); return (T)(m * cos(a.y), m * sin(a.y)); }
inline T c_log(T a) { return (T)(log(fast_hypot(a.x, a.y)), atan2(a.y, a.x)); }
// The principal square root without cancellation: the larger part from sqrt((|x| + r) / 2), the other by division.
inline T c_sqrt(T a) {
    const R r = fast_hypot(a.x, a.y);
    if (r == (R)0) return (T)((R)0, a.y);
    const R t = sqrt((fabs(a.x) + r) * (R)0.5);
    return a.x >= (R)0 ? (T)(t, a.y / (t * (R)2)) : (T)(fabs(a.y) / (t * (R)2), copysign(t, a.y));
}
";

struct Gen<'a> {
    op: &'a str,
    complex: bool,
    lines: String,
    constants: Vec<f64>,
    /// Subexpressions already computed: their text → (variable, type).
    seen: HashMap<String, (String, Ty)>,
    /// Which inputs the expressions read.
    used: Vec<bool>,
}

impl<'a> Gen<'a> {
    fn new(op: &'a str, complex: bool, inputs: usize) -> Gen<'a> {
        Gen {
            op,
            complex,
            lines: String::new(),
            constants: Vec::new(),
            seen: HashMap::new(),
            used: vec![false; inputs],
        }
    }

    fn real_only(&self, what: &str, e: &Expr) -> Error {
        Error::invalid(self.op, format!("`{what}` is defined for real values only, and `{e}` is complex"))
    }

    fn temp(&mut self, ty: Ty, value: String) -> (String, Ty) {
        let name = format!("t{}", self.seen.len());
        let _ = writeln!(self.lines, "        const {} {name} = {value};", if ty == Ty::Real { "R" } else { "T" });
        (name, ty)
    }

    /// The variable holding `e`'s value and its type.
    fn node(&mut self, e: &Expr) -> Result<(String, Ty)> {
        if let Expr::Constant(c) = e {
            self.constants.push(*c);
            return Ok((format!("c{}", self.constants.len() - 1), Ty::Real));
        }
        if let Expr::Input(k) = e {
            let given = self.used.len();
            let slot = self.used.get_mut(*k).ok_or_else(|| {
                Error::invalid(self.op, format!("`{e}` reads input {k}, and there are {given} input(s)"))
            })?;
            *slot = true;
            return Ok((format!("x{k}"), if self.complex { Ty::Complex } else { Ty::Real }));
        }
        let key = e.to_string();
        if let Some(v) = self.seen.get(&key) {
            return Ok(v.clone());
        }
        let out = match e {
            Expr::Unary(f, a) => {
                let (a_var, a_ty) = self.node(a)?;
                self.unary(*f, &a_var, a_ty, a)?
            }
            Expr::Binary(f, a, b) => {
                let (av, at) = self.node(a)?;
                let (bv, bt) = self.node(b)?;
                self.binary(*f, (&av, at), (&bv, bt), e)?
            }
            Expr::Where(c, a, b) => {
                let (cv, ct) = self.node(c)?;
                let (av, at) = self.node(a)?;
                let (bv, bt) = self.node(b)?;
                let cond =
                    if ct == Ty::Complex { format!("({cv}.x != 0 || {cv}.y != 0)") } else { format!("{cv} != 0") };
                if at == Ty::Real && bt == Ty::Real {
                    self.temp(Ty::Real, format!("{cond} ? {av} : {bv}"))
                } else {
                    let (av, bv) = (promote(&av, at), promote(&bv, bt));
                    self.temp(Ty::Complex, format!("{cond} ? {av} : {bv}"))
                }
            }
            Expr::Constant(_) | Expr::Input(_) => return Err(Error::invalid(self.op, "unreachable leaf")),
        };
        self.seen.insert(key, out.clone());
        Ok(out)
    }

    fn unary(&mut self, f: UnaryOp, a: &str, ty: Ty, e: &Expr) -> Result<(String, Ty)> {
        use UnaryOp::*;
        let c = ty == Ty::Complex;
        let (ty, text) = match f {
            Negative => (ty, format!("-{a}")),
            Abs if c => (Ty::Real, format!("fast_hypot({a}.x, {a}.y)")),
            Abs => (Ty::Real, format!("fabs({a})")),
            Sqrt if c => (ty, format!("c_sqrt({a})")),
            Exp if c => (ty, format!("c_exp({a})")),
            Log if c => (ty, format!("c_log({a})")),
            Square if c => (ty, format!("c_mul({a}, {a})")),
            Square => (ty, format!("{a} * {a}")),
            Real if c => (Ty::Real, format!("{a}.x")),
            Imag if c => (Ty::Real, format!("{a}.y")),
            Conj if c => (ty, format!("(T)({a}.x, -{a}.y)")),
            Angle if c => (Ty::Real, format!("atan2({a}.y, {a}.x)")),
            Real | Conj => (ty, a.to_string()),
            Imag => (ty, "(R)0".to_string()),
            Angle => (ty, format!("atan2((R)0, {a})")),
            _ if c => return Err(self.real_only(f.name(), e)),
            Sign => (ty, format!("{a} > (R)0 ? (R)1 : ({a} < (R)0 ? (R)-1 : {a})")),
            Sqrt | Exp | Log | Log10 | Sin | Cos | Tan | Floor | Ceil | Rint => (ty, format!("{}({a})", f.name())),
        };
        Ok(self.temp(ty, text))
    }

    fn binary(&mut self, f: BinaryOp, (a, at): (&str, Ty), (b, bt): (&str, Ty), e: &Expr) -> Result<(String, Ty)> {
        use BinaryOp::*;
        if at == Ty::Complex || bt == Ty::Complex {
            let (ca, cb) = (promote(a, at), promote(b, bt));
            let (ty, text) = match f {
                Add => (Ty::Complex, format!("{ca} + {cb}")),
                Subtract => (Ty::Complex, format!("{ca} - {cb}")),
                // A real factor scales both parts: no complex product needed.
                Multiply if at == Ty::Real || bt == Ty::Real => (Ty::Complex, format!("{a} * {b}")),
                Multiply => (Ty::Complex, format!("c_mul({ca}, {cb})")),
                Divide if bt == Ty::Real => (Ty::Complex, format!("{a} / {b}")),
                Divide => (Ty::Complex, format!("c_div({ca}, {cb})")),
                Equal => (Ty::Real, format!("({ca}.x == {cb}.x && {ca}.y == {cb}.y) ? (R)1 : (R)0")),
                NotEqual => (Ty::Real, format!("({ca}.x != {cb}.x || {ca}.y != {cb}.y) ? (R)1 : (R)0")),
                _ => return Err(self.real_only(f.name(), e)),
            };
            return Ok(self.temp(ty, text));
        }
        let cmp = |op: &str| format!("{a} {op} {b} ? (R)1 : (R)0");
        let text = match f {
            Add => format!("{a} + {b}"),
            Subtract => format!("{a} - {b}"),
            Multiply => format!("{a} * {b}"),
            Divide => format!("{a} / {b}"),
            Power => format!("pow({a}, {b})"),
            // numpy's minimum and maximum propagate NaN (OpenCL's fmin/fmax drop it).
            Minimum => format!("({a} < {b} || isnan({a})) ? {a} : {b}"),
            Maximum => format!("({a} > {b} || isnan({a})) ? {a} : {b}"),
            Hypot => format!("fast_hypot({a}, {b})"),
            Arctan2 => format!("atan2({a}, {b})"),
            Greater => cmp(">"),
            GreaterEqual => cmp(">="),
            Less => cmp("<"),
            LessEqual => cmp("<="),
            Equal => cmp("=="),
            NotEqual => cmp("!="),
        };
        Ok(self.temp(Ty::Real, text))
    }
}

/// A value as complex: real values get a zero imaginary part.
fn promote(v: &str, ty: Ty) -> String {
    if ty == Ty::Real { format!("(T)({v}, (R)0)") } else { v.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_source_for_every_constant_and_shared_subexpressions() {
        let shape = KernelShape {
            complex: false,
            inputs: &[vec![Step::One]],
            outputs: &[(vec![Step::One], true)],
            vector: false,
        };
        let e1 = Expr::parse("clip(x*x, 0, 1) + x*x", &["x"]).unwrap_or(Expr::Constant(0.0));
        let e2 = Expr::parse("clip(x*x, 5, 7) + x*x", &["x"]).unwrap_or(Expr::Constant(0.0));
        let (g1, g2) = (generate("t", &[&e1], &shape), generate("t", &[&e2], &shape));
        let (Ok(g1), Ok(g2)) = (g1, g2) else { panic!("generation failed") };
        assert_eq!(g1.source, g2.source);
        assert_eq!(g2.constants, vec![5.0, 7.0]);
        assert_eq!(g1.source.matches("x0 * x0").count(), 1, "{}", g1.source);
    }

    #[test]
    fn complex_results_need_a_complex_output() {
        let shape = KernelShape {
            complex: true,
            inputs: &[vec![Step::One]],
            outputs: &[(vec![Step::One], true)],
            vector: false,
        };
        let e = Expr::parse("x * 2", &["x"]).unwrap_or(Expr::Constant(0.0));
        let err = generate("t", &[&e], &shape).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("is complex and the output is real"), "{err}");
        let e = Expr::parse("maximum(x, 0)", &["x"]).unwrap_or(Expr::Constant(0.0));
        let err = generate("t", &[&e], &shape).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("`maximum` is defined for real values only"), "{err}");
    }
}

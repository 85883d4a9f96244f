//! [`Expr`]: an element-wise expression over input arrays and constants, as numpy's ufuncs compute it — built
//! with methods and operators (`(x.clone() * x + y.clone() * y).sqrt()`) or parsed from text
//! (`"sqrt(a*a + b*b)"`, the CLI's and pipeline files' form). The [`super::Elementwise`] process compiles one
//! kernel per expression *shape*: constants travel as kernel arguments, so changing a threshold or a window
//! level builds nothing new.

use crate::error::{Error, Result};
use std::fmt;

/// A one-argument function of an [`Expr`], named as numpy's ufunc.
///
/// ```
/// use cliper::{Expr, UnaryOp};
/// assert_eq!(UnaryOp::Rint.name(), "rint");
/// assert_eq!(Expr::input(0).unary(UnaryOp::Angle).to_string(), "angle(in0)");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x` (numpy.negative).
    Negative,
    /// `|x|` (numpy.abs; the modulus for complex x, a real result).
    Abs,
    /// numpy.sqrt (principal branch for complex x; NaN for negative reals, as numpy).
    Sqrt,
    /// numpy.exp.
    Exp,
    /// numpy.log, the natural logarithm (principal branch for complex x).
    Log,
    /// numpy.log10 (real only).
    Log10,
    /// numpy.sin (real only).
    Sin,
    /// numpy.cos (real only).
    Cos,
    /// numpy.tan (real only).
    Tan,
    /// numpy.floor (real only).
    Floor,
    /// numpy.ceil (real only).
    Ceil,
    /// numpy.rint: to the nearest integer, halves to even (real only).
    Rint,
    /// numpy.square, `x·x`.
    Square,
    /// numpy.real (a real result; x itself for real x).
    Real,
    /// numpy.imag (a real result; 0 for real x).
    Imag,
    /// numpy.conj (x itself for real x).
    Conj,
    /// numpy.angle in radians, in (−π, π] (a real result; 0 or π for real x).
    Angle,
    /// numpy.sign (real only: −1, 0 or 1; NaN stays NaN).
    Sign,
}

/// A two-argument function of [`Expr`]s, named as numpy's ufunc. Comparisons give 1 or 0.
///
/// ```
/// use cliper::{BinaryOp, Expr};
/// assert_eq!(Expr::input(0).binary(BinaryOp::Hypot, Expr::input(1)).to_string(), "hypot(in0, in1)");
/// assert_eq!(BinaryOp::GreaterEqual.name(), ">=");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// numpy.add.
    Add,
    /// numpy.subtract.
    Subtract,
    /// numpy.multiply.
    Multiply,
    /// numpy.divide (true division).
    Divide,
    /// numpy.power (real only).
    Power,
    /// numpy.minimum: the smaller, NaN if either is NaN (real only).
    Minimum,
    /// numpy.maximum: the larger, NaN if either is NaN (real only).
    Maximum,
    /// numpy.hypot, `sqrt(a² + b²)` without overflow (real only).
    Hypot,
    /// numpy.arctan2(a, b), the angle of (b, a) (real only).
    Arctan2,
    /// `a > b` (real only).
    Greater,
    /// `a >= b` (real only).
    GreaterEqual,
    /// `a < b` (real only).
    Less,
    /// `a <= b` (real only).
    LessEqual,
    /// `a == b`.
    Equal,
    /// `a != b`.
    NotEqual,
}

/// An element-wise expression: the value at each element of the output, from the values at the same element of
/// the inputs (broadcast by numpy's rules) and constants.
///
/// ```
/// use cliper::Expr;
/// let (a, b) = (Expr::input(0), Expr::input(1));
/// let magnitude = (a.clone() * a + b.clone() * b).sqrt();
/// assert_eq!(magnitude, Expr::parse("sqrt(a*a + b*b)", &["a", "b"])?);
/// assert_eq!(magnitude.to_string(), "sqrt(((in0 * in0) + (in1 * in1)))");
/// assert_eq!(Expr::parse("clip(x, 0, 1)", &["x"])?.inputs(), 1);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// The `k`-th input array.
    Input(usize),
    /// A constant (a kernel argument: changing it builds no new program).
    Constant(f64),
    /// A function of one expression.
    Unary(UnaryOp, Box<Expr>),
    /// A function of two expressions.
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// numpy.where: `then` where `condition` is non-zero, else `otherwise`.
    Where(Box<Expr>, Box<Expr>, Box<Expr>),
}

impl Expr {
    /// The `k`-th input array.
    ///
    /// ```
    /// assert_eq!(cliper::Expr::input(1).inputs(), 2);
    /// ```
    pub fn input(k: usize) -> Expr {
        Expr::Input(k)
    }

    /// A constant.
    ///
    /// ```
    /// assert_eq!(cliper::Expr::constant(2.5).inputs(), 0);
    /// ```
    pub fn constant(value: f64) -> Expr {
        Expr::Constant(value)
    }

    /// `f(self)`.
    ///
    /// ```
    /// use cliper::{Expr, UnaryOp};
    /// assert_eq!(Expr::input(0).unary(UnaryOp::Exp), Expr::input(0).exp());
    /// ```
    pub fn unary(self, f: UnaryOp) -> Expr {
        Expr::Unary(f, Box::new(self))
    }

    /// `f(self, other)`.
    ///
    /// ```
    /// use cliper::{BinaryOp, Expr};
    /// assert_eq!(Expr::input(0).binary(BinaryOp::Maximum, Expr::constant(0.0)), Expr::input(0).maximum(0.0));
    /// ```
    pub fn binary(self, f: BinaryOp, other: impl Into<Expr>) -> Expr {
        Expr::Binary(f, Box::new(self), Box::new(other.into()))
    }

    /// numpy.where(condition, then, otherwise).
    ///
    /// ```
    /// use cliper::Expr;
    /// let relu = Expr::select(Expr::input(0).greater(0.0), Expr::input(0), 0.0);
    /// assert_eq!(relu, Expr::parse("where(x > 0, x, 0)", &["x"])?);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn select(condition: Expr, then: impl Into<Expr>, otherwise: impl Into<Expr>) -> Expr {
        Expr::Where(Box::new(condition), Box::new(then.into()), Box::new(otherwise.into()))
    }

    /// numpy.abs.
    pub fn abs(self) -> Expr {
        self.unary(UnaryOp::Abs)
    }
    /// numpy.sqrt.
    pub fn sqrt(self) -> Expr {
        self.unary(UnaryOp::Sqrt)
    }
    /// numpy.exp.
    pub fn exp(self) -> Expr {
        self.unary(UnaryOp::Exp)
    }
    /// numpy.log.
    pub fn log(self) -> Expr {
        self.unary(UnaryOp::Log)
    }
    /// numpy.square.
    pub fn square(self) -> Expr {
        self.unary(UnaryOp::Square)
    }
    /// numpy.real.
    pub fn real(self) -> Expr {
        self.unary(UnaryOp::Real)
    }
    /// numpy.imag.
    pub fn imag(self) -> Expr {
        self.unary(UnaryOp::Imag)
    }
    /// numpy.conj.
    pub fn conj(self) -> Expr {
        self.unary(UnaryOp::Conj)
    }
    /// numpy.angle.
    pub fn angle(self) -> Expr {
        self.unary(UnaryOp::Angle)
    }
    /// numpy.power(self, exponent).
    pub fn pow(self, exponent: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Power, exponent)
    }
    /// numpy.minimum(self, other).
    pub fn minimum(self, other: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Minimum, other)
    }
    /// numpy.maximum(self, other).
    pub fn maximum(self, other: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Maximum, other)
    }
    /// numpy.hypot(self, other).
    pub fn hypot(self, other: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Hypot, other)
    }
    /// `self > other`, 1 or 0.
    pub fn greater(self, other: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Greater, other)
    }
    /// `self < other`, 1 or 0.
    pub fn less(self, other: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Less, other)
    }

    /// numpy.clip(self, low, high) = minimum(maximum(self, low), high).
    ///
    /// ```
    /// use cliper::Expr;
    /// assert_eq!(Expr::input(0).clip(0.0, 1.0), Expr::input(0).maximum(0.0).minimum(1.0));
    /// ```
    pub fn clip(self, low: impl Into<Expr>, high: impl Into<Expr>) -> Expr {
        self.maximum(low).minimum(high)
    }

    /// A CT/MR display window: `level ± width/2` mapped linearly onto `[0, 1]`, values outside clipped
    /// (DICOM's window centre/width, the linear function of PS3.3 C.11.2.1.2 without its ½-unit offsets).
    ///
    /// ```
    /// use cliper::Expr;
    /// // Level 40, width 400: −160 HU → 0, 240 HU → 1.
    /// let w = Expr::input(0).window(40.0, 400.0);
    /// assert_eq!(w, Expr::parse("clip((x - -160) / 400, 0, 1)", &["x"])?);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn window(self, level: f64, width: f64) -> Expr {
        ((self - (level - width / 2.0)) / width).clip(0.0, 1.0)
    }

    /// `above` where `self > threshold`, else `below`.
    ///
    /// ```
    /// use cliper::Expr;
    /// assert_eq!(Expr::input(0).threshold(0.5, 1.0, 0.0), Expr::parse("where(x > 0.5, 1, 0)", &["x"])?);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn threshold(self, threshold: f64, above: f64, below: f64) -> Expr {
        Expr::select(self.greater(threshold), above, below)
    }

    /// The magnitude of a gradient from its components, `sqrt(Σ gₖ²)` (hypot for two), one fused kernel.
    ///
    /// ```
    /// use cliper::Expr;
    /// assert_eq!(Expr::magnitude(2), Expr::input(0).hypot(Expr::input(1)));
    /// assert_eq!(Expr::magnitude(3).inputs(), 3);
    /// ```
    pub fn magnitude(components: usize) -> Expr {
        match components {
            0 => Expr::constant(0.0),
            1 => Expr::input(0).abs(),
            2 => Expr::input(0).hypot(Expr::input(1)),
            n => (0..n).map(|k| Expr::input(k).square()).reduce(|a, b| a + b).unwrap_or(Expr::Constant(0.0)).sqrt(),
        }
    }

    /// How many inputs the expression reads: one more than the highest input index.
    pub fn inputs(&self) -> usize {
        match self {
            Expr::Input(k) => k + 1,
            Expr::Constant(_) => 0,
            Expr::Unary(_, a) => a.inputs(),
            Expr::Binary(_, a, b) => a.inputs().max(b.inputs()),
            Expr::Where(c, a, b) => c.inputs().max(a.inputs()).max(b.inputs()),
        }
    }

    /// Whether the value is complex when the inputs are (`complex_inputs`) or are not: `abs`, `real`, `imag`,
    /// `angle` and comparisons are real, arithmetic on a complex value is complex.
    ///
    /// ```
    /// use cliper::Expr;
    /// assert!(!Expr::parse("abs(z) + 1", &["z"])?.complex_result(true));
    /// assert!(Expr::parse("z * abs(z)", &["z"])?.complex_result(true));
    /// assert!(!Expr::parse("z * 2", &["z"])?.complex_result(false));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn complex_result(&self, complex_inputs: bool) -> bool {
        match self {
            Expr::Input(_) => complex_inputs,
            Expr::Constant(_) => false,
            Expr::Unary(f, a) => match f {
                UnaryOp::Negative | UnaryOp::Sqrt | UnaryOp::Exp | UnaryOp::Log | UnaryOp::Square | UnaryOp::Conj => {
                    a.complex_result(complex_inputs)
                }
                _ => false,
            },
            Expr::Binary(f, a, b) => match f {
                BinaryOp::Add | BinaryOp::Subtract | BinaryOp::Multiply | BinaryOp::Divide => {
                    a.complex_result(complex_inputs) || b.complex_result(complex_inputs)
                }
                _ => false,
            },
            Expr::Where(_, a, b) => a.complex_result(complex_inputs) || b.complex_result(complex_inputs),
        }
    }

    /// The expression with input `k` replaced by `by(k)`.
    pub(crate) fn substitute(&self, by: &dyn Fn(usize) -> Expr) -> Expr {
        match self {
            Expr::Input(k) => by(*k),
            Expr::Constant(c) => Expr::Constant(*c),
            Expr::Unary(f, a) => Expr::Unary(*f, Box::new(a.substitute(by))),
            Expr::Binary(f, a, b) => Expr::Binary(*f, Box::new(a.substitute(by)), Box::new(b.substitute(by))),
            Expr::Where(c, a, b) => {
                Expr::Where(Box::new(c.substitute(by)), Box::new(a.substitute(by)), Box::new(b.substitute(by)))
            }
        }
    }

    /// Parses an expression over the inputs named `names` (input `k` is `names[k]`): numbers, `pi`, `+ - * /`,
    /// `**` or `^` (power), comparisons (`> >= < <= == !=`, giving 1 or 0), parentheses, and the functions
    /// `abs sqrt exp log log10 sin cos tan floor ceil rint square real imag conj angle sign` (one argument),
    /// `minimum maximum power hypot arctan2` (two; `min`/`max`/`pow`/`atan2` too), `clip(x, low, high)`,
    /// `where(condition, a, b)`, `window(x, level, width)` and `threshold(x, t)`. Errors say where and what.
    ///
    /// ```
    /// use cliper::Expr;
    /// let e = Expr::parse("where(ct > -500, window(ct, 40, 400), 0)", &["ct"])?;
    /// assert_eq!(e.inputs(), 1);
    /// let err = Expr::parse("sqrt(x", &["x"]).unwrap_err().to_string();
    /// assert!(err.contains("expected `)`"), "{err}");
    /// assert!(Expr::parse("y + 1", &["x"]).unwrap_err().to_string().contains("unknown name `y`"));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn parse(text: &str, names: &[&str]) -> Result<Expr> {
        let mut p = Parser { text, pos: 0, names };
        let e = p.comparison()?;
        p.skip_space();
        if p.pos < text.len() {
            return Err(p.error("an operator or the end"));
        }
        Ok(e)
    }
}

impl From<f64> for Expr {
    fn from(value: f64) -> Expr {
        Expr::Constant(value)
    }
}

macro_rules! operator {
    ($trait:ident, $method:ident, $op:expr) => {
        impl<E: Into<Expr>> std::ops::$trait<E> for Expr {
            type Output = Expr;
            fn $method(self, other: E) -> Expr {
                self.binary($op, other)
            }
        }
    };
}
operator!(Add, add, BinaryOp::Add);
operator!(Sub, sub, BinaryOp::Subtract);
operator!(Mul, mul, BinaryOp::Multiply);
operator!(Div, div, BinaryOp::Divide);

impl std::ops::Neg for Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        self.unary(UnaryOp::Negative)
    }
}

impl UnaryOp {
    /// numpy's name.
    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Negative => "negative",
            UnaryOp::Abs => "abs",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Exp => "exp",
            UnaryOp::Log => "log",
            UnaryOp::Log10 => "log10",
            UnaryOp::Sin => "sin",
            UnaryOp::Cos => "cos",
            UnaryOp::Tan => "tan",
            UnaryOp::Floor => "floor",
            UnaryOp::Ceil => "ceil",
            UnaryOp::Rint => "rint",
            UnaryOp::Square => "square",
            UnaryOp::Real => "real",
            UnaryOp::Imag => "imag",
            UnaryOp::Conj => "conj",
            UnaryOp::Angle => "angle",
            UnaryOp::Sign => "sign",
        }
    }

    const ALL: [UnaryOp; 18] = [
        UnaryOp::Negative,
        UnaryOp::Abs,
        UnaryOp::Sqrt,
        UnaryOp::Exp,
        UnaryOp::Log,
        UnaryOp::Log10,
        UnaryOp::Sin,
        UnaryOp::Cos,
        UnaryOp::Tan,
        UnaryOp::Floor,
        UnaryOp::Ceil,
        UnaryOp::Rint,
        UnaryOp::Square,
        UnaryOp::Real,
        UnaryOp::Imag,
        UnaryOp::Conj,
        UnaryOp::Angle,
        UnaryOp::Sign,
    ];
}

impl BinaryOp {
    /// numpy's name (the operator for arithmetic and comparisons in [`Expr`]'s `Display`).
    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Subtract => "-",
            BinaryOp::Multiply => "*",
            BinaryOp::Divide => "/",
            BinaryOp::Power => "power",
            BinaryOp::Minimum => "minimum",
            BinaryOp::Maximum => "maximum",
            BinaryOp::Hypot => "hypot",
            BinaryOp::Arctan2 => "arctan2",
            BinaryOp::Greater => ">",
            BinaryOp::GreaterEqual => ">=",
            BinaryOp::Less => "<",
            BinaryOp::LessEqual => "<=",
            BinaryOp::Equal => "==",
            BinaryOp::NotEqual => "!=",
        }
    }

    fn is_infix(self) -> bool {
        !self.name().chars().next().is_some_and(|c| c.is_ascii_alphabetic())
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Input(k) => write!(f, "in{k}"),
            Expr::Constant(c) => write!(f, "{c}"),
            Expr::Unary(op, a) => write!(f, "{}({a})", op.name()),
            Expr::Binary(op, a, b) if op.is_infix() => write!(f, "({a} {} {b})", op.name()),
            Expr::Binary(op, a, b) => write!(f, "{}({a}, {b})", op.name()),
            Expr::Where(c, a, b) => write!(f, "where({c}, {a}, {b})"),
        }
    }
}

/// A recursive-descent parser over `text`; `pos` is a byte offset.
struct Parser<'a> {
    text: &'a str,
    pos: usize,
    names: &'a [&'a str],
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        self.text.get(self.pos..).unwrap_or("")
    }

    fn skip_space(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start().len();
    }

    fn error(&self, expected: &str) -> Error {
        let found = self.rest().chars().next().map_or("the end".to_string(), |c| format!("`{c}`"));
        Error::invalid(
            "expression",
            format!("`{}`: expected {expected} at character {}, found {found}", self.text, self.pos + 1),
        )
    }

    /// Consumes `token` if it comes next.
    fn eat(&mut self, token: &str) -> bool {
        self.skip_space();
        if self.rest().starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str) -> Result<()> {
        if self.eat(token) { Ok(()) } else { Err(self.error(&format!("`{token}`"))) }
    }

    fn comparison(&mut self) -> Result<Expr> {
        let a = self.sum()?;
        for (token, op) in [
            (">=", BinaryOp::GreaterEqual),
            ("<=", BinaryOp::LessEqual),
            ("==", BinaryOp::Equal),
            ("!=", BinaryOp::NotEqual),
            (">", BinaryOp::Greater),
            ("<", BinaryOp::Less),
        ] {
            if self.eat(token) {
                return Ok(a.binary(op, self.sum()?));
            }
        }
        Ok(a)
    }

    fn sum(&mut self) -> Result<Expr> {
        let mut a = self.product()?;
        loop {
            if self.eat("+") {
                a = a + self.product()?;
            } else if self.eat("-") {
                a = a - self.product()?;
            } else {
                return Ok(a);
            }
        }
    }

    fn product(&mut self) -> Result<Expr> {
        let mut a = self.signed()?;
        loop {
            self.skip_space();
            if self.rest().starts_with("**") {
                return Ok(a);
            }
            if self.eat("*") {
                a = a * self.signed()?;
            } else if self.eat("/") {
                a = a / self.signed()?;
            } else {
                return Ok(a);
            }
        }
    }

    fn signed(&mut self) -> Result<Expr> {
        if self.eat("-") {
            // A literal's sign folds into it (`-160` is the constant −160), as Python's constant folding does.
            return Ok(match self.signed()? {
                Expr::Constant(c) => Expr::Constant(-c),
                e => -e,
            });
        }
        if self.eat("+") {
            return self.signed();
        }
        self.power()
    }

    /// `atom (** | ^) signed`, right-associative as in Python (`-2**2` is −4: the sign binds looser).
    fn power(&mut self) -> Result<Expr> {
        let base = self.atom()?;
        if self.eat("**") || self.eat("^") { Ok(base.pow(self.signed()?)) } else { Ok(base) }
    }

    fn atom(&mut self) -> Result<Expr> {
        self.skip_space();
        if self.eat("(") {
            let e = self.comparison()?;
            self.expect(")")?;
            return Ok(e);
        }
        let rest = self.text.get(self.pos..).unwrap_or("");
        let number_len = rest
            .char_indices()
            .take_while(|&(i, c)| {
                c.is_ascii_digit()
                    || c == '.'
                    || ((c == 'e' || c == 'E') && i > 0)
                    || ((c == '-' || c == '+') && i > 0 && rest.get(..i).is_some_and(|r| r.ends_with(['e', 'E'])))
            })
            .count();
        if number_len > 0 && rest.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            let token = rest.get(..number_len).unwrap_or("");
            let value = token.parse::<f64>().map_err(|_| self.error("a number"))?;
            self.pos += number_len;
            return Ok(Expr::Constant(value));
        }
        let name_len = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').count();
        if name_len == 0 || rest.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(self.error("a number, a name or `(`"));
        }
        let name: &str = rest.get(..name_len).unwrap_or("");
        let start = self.pos;
        self.pos += name_len;
        if !self.eat("(") {
            if let Some(k) = self.names.iter().position(|n| *n == name) {
                return Ok(Expr::Input(k));
            }
            if name == "pi" {
                return Ok(Expr::Constant(std::f64::consts::PI));
            }
            self.pos = start;
            return Err(Error::invalid(
                "expression",
                format!(
                    "`{}`: unknown name `{name}` at character {} (the inputs are {})",
                    self.text,
                    start + 1,
                    self.names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        let mut args = vec![self.comparison()?];
        while self.eat(",") {
            args.push(self.comparison()?);
        }
        self.expect(")")?;
        self.call(name, start, args)
    }

    fn call(&self, name: &str, start: usize, args: Vec<Expr>) -> Result<Expr> {
        let wrong = |want: usize| {
            Error::invalid(
                "expression",
                format!(
                    "`{}`: `{name}` at character {} takes {want} argument(s), got {}",
                    self.text,
                    start + 1,
                    args.len()
                ),
            )
        };
        let binary = match name {
            "minimum" | "min" => Some(BinaryOp::Minimum),
            "maximum" | "max" => Some(BinaryOp::Maximum),
            "power" | "pow" => Some(BinaryOp::Power),
            "hypot" => Some(BinaryOp::Hypot),
            "arctan2" | "atan2" => Some(BinaryOp::Arctan2),
            _ => None,
        };
        let unary =
            UnaryOp::ALL.iter().copied().find(|op| op.name() == name || (name == "absolute" && *op == UnaryOp::Abs));
        let mut it = args.clone().into_iter();
        let mut next = || it.next().ok_or_else(|| wrong(args.len() + 1));
        match (name, unary, binary, args.len()) {
            (_, Some(op), _, 1) => Ok(next()?.unary(op)),
            (_, Some(_), _, _) => Err(wrong(1)),
            (_, _, Some(op), 2) => Ok(next()?.binary(op, next()?)),
            (_, _, Some(_), _) => Err(wrong(2)),
            ("clip", _, _, 3) => Ok(next()?.clip(next()?, next()?)),
            ("where", _, _, 3) => Ok(Expr::select(next()?, next()?, next()?)),
            ("window", _, _, 3) => {
                let x = next()?;
                match (next()?, next()?) {
                    (Expr::Constant(level), Expr::Constant(width)) => Ok(x.window(level, width)),
                    _ => Err(Error::invalid(
                        "expression",
                        format!("`{}`: window(x, level, width) takes numbers for level and width", self.text),
                    )),
                }
            }
            ("threshold", _, _, 2) => {
                let x = next()?;
                Ok(Expr::select(x.greater(next()?), 1.0, 0.0))
            }
            ("clip" | "where" | "window", _, _, _) => Err(wrong(3)),
            ("threshold", _, _, _) => Err(wrong(2)),
            _ => Err(Error::invalid(
                "expression",
                format!("`{}`: unknown function `{name}` at character {}", self.text, start + 1),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_follows_python() {
        let p = |t: &str| Expr::parse(t, &["x", "y"]).map(|e| e.to_string());
        assert_eq!(p("x + y * 2").ok().as_deref(), Some("(in0 + (in1 * 2))"));
        assert_eq!(p("-x ** 2").ok().as_deref(), Some("negative(power(in0, 2))"));
        assert_eq!(p("x ** -1").ok().as_deref(), Some("power(in0, -1)"));
        assert_eq!(p("2 ** 3 ** 2").ok().as_deref(), Some("power(2, power(3, 2))"));
        assert_eq!(p("x - y - 1").ok().as_deref(), Some("((in0 - in1) - 1)"));
        assert_eq!(p("x / 2 / y").ok().as_deref(), Some("((in0 / 2) / in1)"));
        assert_eq!(p("1e-3 * x + 2.5E+2").ok().as_deref(), Some("((0.001 * in0) + 250)"));
        assert_eq!(p("x >= y + 1").ok().as_deref(), Some("(in0 >= (in1 + 1))"));
        assert_eq!(p(" max( x , 0 ) ").ok().as_deref(), Some("maximum(in0, 0)"));
    }

    #[test]
    fn errors_say_where() {
        let e = |t: &str| Expr::parse(t, &["x"]).map(|_| ()).unwrap_err().to_string();
        assert!(e("x +").contains("expected a number, a name or `(` at character 4, found the end"), "{}", e("x +"));
        assert!(e("sqrt(x, x)").contains("`sqrt` at character 1 takes 1 argument(s), got 2"));
        assert!(e("clip(x, 1)").contains("takes 3 argument(s), got 2"));
        assert!(e("foo(x)").contains("unknown function `foo`"));
        assert!(e("x y").contains("expected an operator or the end at character 3, found `y`"));
        assert!(e("window(x, x, 1)").contains("takes numbers for level and width"));
    }
}

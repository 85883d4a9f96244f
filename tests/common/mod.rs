//! Shared helpers for the integration tests: one `ClApp` per test binary (so each kernel program is built
//! once), a small deterministic random generator, and float64 references built with ndarray.
#![allow(dead_code)]

use cliper::{Border, ClApp, Element, XData};
use ndarray::{ArrayD, IxDyn};
use num_complex::Complex64;
use std::sync::OnceLock;

/// The test binary's device (the best one, or CLIPER_DEVICE's choice), with profiling on.
pub fn app() -> &'static ClApp {
    static APP: OnceLock<ClApp> = OnceLock::new();
    APP.get_or_init(|| ClApp::builder().use_env(true).profiling(true).build().expect("an OpenCL device for the tests"))
}

/// SplitMix64: tiny, deterministic, good enough to make test data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [-1, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn vec<T: Element>(&mut self, n: usize) -> Vec<T> {
        (0..n).map(|_| T::from_c64(Complex64::new(self.uniform(), self.uniform()))).collect()
    }
}

/// A random device array of `shape` and its host copy widened to complex float64.
pub fn random<T: Element>(rng: &mut Rng, shape: &[usize]) -> (XData<T>, ArrayD<Complex64>) {
    let n = shape.iter().product();
    let data: Vec<T> = rng.vec(n);
    let x = XData::from_slice(app(), shape, &data).expect("upload");
    let host = ArrayD::from_shape_vec(IxDyn(shape), data.iter().map(|v| v.to_c64()).collect()).expect("shape");
    (x, host)
}

/// A device array of `shape` filled with a value random data never takes, to catch unwritten outputs.
pub fn poisoned<T: Element>(shape: &[usize]) -> XData<T> {
    let n = shape.iter().product();
    let data = vec![T::from_c64(Complex64::new(1234.5, -987.25)); n];
    XData::from_slice(app(), shape, &data).expect("upload")
}

/// The device array read back and widened to complex float64.
pub fn fetch<T: Element>(x: &XData<T>) -> ArrayD<Complex64> {
    x.to_ndarray().expect("read back").mapv(|v| v.to_c64())
}

/// Asserts exact equality (for pure data movement: no arithmetic, so no rounding to allow for).
pub fn assert_same(got: &ArrayD<Complex64>, want: &ArrayD<Complex64>, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shapes differ");
    if let Some((i, (g, w))) = got.iter().zip(want.iter()).enumerate().find(|(_, (g, w))| g != w) {
        panic!("{what}: element {i} (row-major) is {g}, expected {w}");
    }
}

/// `[batch…, r, c]` → `[batch…, c, r]` in float64, conjugated on request.
pub fn transpose_ref(a: &ArrayD<Complex64>, conjugate: bool) -> ArrayD<Complex64> {
    let n = a.ndim();
    let mut axes: Vec<usize> = (0..n).collect();
    axes.swap(n - 2, n - 1);
    let t = a.clone().permuted_axes(IxDyn(&axes)).as_standard_layout().to_owned();
    if conjugate { t.mapv(|v| v.conj()) } else { t }
}

/// The unit roundoff of `T`'s real type (half the machine epsilon), for error bounds.
pub fn eps<T: Element>() -> f64 {
    if T::IS_DOUBLE { f64::EPSILON / 2.0 } else { f32::EPSILON as f64 / 2.0 }
}

/// Every element type gets the same test body.
#[macro_export]
macro_rules! for_each_element {
    ($body:ident) => {
        $body::<f32>();
        $body::<f64>();
        $body::<num_complex::Complex32>();
        $body::<num_complex::Complex64>();
    };
}

/// Where coordinate `i` of an axis of extent `n` reads from under a border rule (`None`: the constant), found
/// the way numpy builds a pad — reflecting or wrapping step by step until the coordinate lands inside — an
/// independent formulation of the periodic rule the kernels use.
pub fn border_source(mode: Border, mut i: i64, n: i64) -> Option<i64> {
    loop {
        if (0..n).contains(&i) {
            return Some(i);
        }
        i = match mode {
            Border::Constant(_) => return None,
            Border::Nearest => i.clamp(0, n - 1),
            Border::Wrap if i < 0 => i + n,
            Border::Wrap => i - n,
            Border::Mirror if n == 1 => 0,
            Border::Mirror if i < 0 => -i,
            Border::Mirror => 2 * (n - 1) - i,
            Border::Reflect if i < 0 => -i - 1,
            Border::Reflect => 2 * n - 1 - i,
        };
    }
}

/// |v| of a `Border::Constant(v)` (what a border contributes to an error bound), 0 for the other rules.
pub fn border_magnitude(border: Border) -> f64 {
    if let Border::Constant(v) = border { v.abs() } else { 0.0 }
}

/// The variable that marks a test's child run (see [`ran_with_two_devices`]).
const TWO_DEVICES_CHILD: &str = "CLIPER_TEST_TWO_DEVICES_CHILD";

/// For tests that need two OpenCL devices: this machine's PoCL offers two when `POCL_DEVICES="pthread pthread"`
/// is set before OpenCL starts, so the test (named `test`) runs itself again as a child process with it (and
/// without CLIPER_DEVICE), asserting the child passed. Returns `true` in the parent, which should return;
/// `false` in the child, which runs the test's body (elsewhere the child sees whatever devices the host has).
pub fn ran_with_two_devices(test: &str) -> bool {
    if std::env::var_os(TWO_DEVICES_CHILD).is_some() {
        return false;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture"])
        .env("POCL_DEVICES", "pthread pthread")
        .env_remove("CLIPER_DEVICE")
        .env(TWO_DEVICES_CHILD, "1")
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && text.contains("1 passed"), "{text}");
    true
}

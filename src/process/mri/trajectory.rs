//! k-space trajectories as `bart traj` (BART 0.8.00, src/traj.c and src/noncart/traj.c) writes them: Cartesian
//! lines and the radial family (uniform over a half or full circle, golden-ratio and tiny golden angles, the
//! half-circle golden ratio, asymmetric readouts, readout oversampling, rotation, turns, stack-of-stars
//! partitions and the 3-D kooshball). A host computation: a few thousand coordinates, each a closed formula.
//!
//! Every value is computed in f64 and rounded once to f32, the spoke angles rounded to f32 first where BART
//! passes them as float (BART computes the directions in float too, so the two
//! differ by ~1e-7 · |k|). Units are cycles per field of view (grid-index units of the image grid).

use crate::error::{Error, Result};
use ndarray::{ArrayD, IxDyn, ShapeBuilder};
use std::f64::consts::PI;

const OP: &str = "traj";

/// BART's dimension indices used by `bart traj` (misc/mri.h): spokes, echoes, turns (time) and partitions
/// (slices); the readout is dimension 1 and the coordinate dimension 0.
const SPOKE_DIM: usize = 2;
const TIME_DIM: usize = 10;
const SLICE_DIM: usize = 13;

/// The parameters of `bart traj`, named as its options (the BART letter in each field's doc).
///
/// ```
/// use cliper::{BartTrajectory, TrajectoryParams};
/// // bart traj -x 64 -y 51 -o 2 -G: golden-angle spokes, 128 samples 0.5 apart.
/// let params = TrajectoryParams { readout: 64, spokes: 51, oversampling: 2.0, golden: true, ..Default::default() };
/// let t = BartTrajectory::new(params)?;
/// assert!(t.params().radial); // -G implies -r, as in BART
/// assert_eq!(t.shape(), vec![3, 128, 51]);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TrajectoryParams {
    /// `-x`: readout samples (before oversampling).
    pub readout: usize,
    /// `-y`: phase-encoding lines (Cartesian) or spokes (radial).
    pub spokes: usize,
    /// `-a`: acceleration, Cartesian only: every a-th line is kept (`spokes` a multiple of it).
    pub acceleration: usize,
    /// `-t`: turns (radial only): the spoke set repeated, rotated by a fraction of the angle step.
    pub turns: usize,
    /// `-m`: SMS multiband factor / stack-of-stars partitions (radial only).
    pub partitions: usize,
    /// `-l`: the same angles in every partition.
    pub aligned: bool,
    /// `-r`: radial (implied by the golden options and by `full_circle`).
    pub radial: bool,
    /// `-G`: golden-ratio angle increments.
    pub golden: bool,
    /// `-H`: golden ratio folded into [0°, 180°) (implies `golden`).
    pub half_circle_golden: bool,
    /// `-s`: tiny golden angle number (1 is the golden angle; ≥ 1 implies `golden`).
    pub tiny_golden: usize,
    /// `-D`: spokes over [0°, 360°) instead of [0°, 180°).
    pub full_circle: bool,
    /// `-o`: readout oversampling factor (samples = ⌊readout · o⌋, coordinates divided by o).
    pub oversampling: f64,
    /// `-R`: rotation of every spoke, degrees.
    pub rotation_degrees: f64,
    /// `-3`: 3-D kooshball (spokes spread over a half sphere, or the whole sphere with `full_circle`).
    pub three_d: bool,
    /// `-c`: asymmetric readout whose sample ⌊samples/2⌋ is k = 0 (else k = 0 lies between two samples).
    pub asymmetric: bool,
}

impl Default for TrajectoryParams {
    /// `bart traj`'s defaults: 128 × 128 Cartesian.
    fn default() -> Self {
        TrajectoryParams {
            readout: 128,
            spokes: 128,
            acceleration: 1,
            turns: 1,
            partitions: 1,
            aligned: false,
            radial: false,
            golden: false,
            half_circle_golden: false,
            tiny_golden: 0,
            full_circle: false,
            oversampling: 1.0,
            rotation_degrees: 0.0,
            three_d: false,
            asymmetric: false,
        }
    }
}

/// The angle increments of one trajectory along spokes, partitions and turns (BART's `calc_base_angles`).
#[derive(Clone, Copy, Debug)]
struct BaseAngles {
    spoke: f64,
    partition: f64,
    turn: f64,
}

/// The trajectory as BART's `bart traj` writes it, after BART's option implications: golden options make it
/// radial, `-s` makes it golden, `-G` without `-s` is tiny golden angle 1.
///
/// ```
/// use cliper::{BartTrajectory, TrajectoryParams};
/// let params = TrajectoryParams { readout: 8, spokes: 2, radial: true, ..TrajectoryParams::default() };
/// let k = BartTrajectory::new(params)?.generate()?;
/// assert_eq!(k.shape(), &[3, 8, 2]);
/// // Spoke 0 runs along ky from −3.5 to 3.5; spoke 1 along kx.
/// assert_eq!((k[[1, 0, 0]], k[[0, 7, 1]]), (-3.5, 3.5));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct BartTrajectory {
    params: TrajectoryParams,
    /// Readout samples after oversampling (BART's `X *= over`, truncated to an integer).
    samples: usize,
}

impl BartTrajectory {
    /// Checks the parameters as `bart traj` does and applies its implications; a refusal names the option.
    pub fn new(mut params: TrajectoryParams) -> Result<Self> {
        if params.readout == 0 || params.spokes == 0 {
            return Err(Error::invalid(
                OP,
                format!("-x {} -y {}: both must be at least 1", params.readout, params.spokes),
            ));
        }
        if params.acceleration == 0 || params.turns == 0 || params.partitions == 0 {
            return Err(Error::invalid(
                OP,
                format!(
                    "-a {} -t {} -m {}: each must be at least 1",
                    params.acceleration, params.turns, params.partitions
                ),
            ));
        }
        if !(params.oversampling.is_finite() && params.oversampling > 0.0) {
            return Err(Error::invalid(
                OP,
                format!("-o {}: the oversampling factor must be positive", params.oversampling),
            ));
        }
        if !params.rotation_degrees.is_finite() {
            return Err(Error::invalid(OP, format!("-R {}: the rotation must be finite", params.rotation_degrees)));
        }
        // BART: X *= over on an int, i.e. truncation.
        let samples = (params.readout as f64 * params.oversampling).floor();
        if !(1.0..=(1u64 << 31) as f64).contains(&samples) {
            return Err(Error::invalid(
                OP,
                format!("-x {} -o {}: {samples} readout samples", params.readout, params.oversampling),
            ));
        }
        if params.half_circle_golden {
            if params.full_circle {
                return Err(Error::invalid(OP, "-H with -D: full-circle or half-circle sampling, not both"));
            }
            params.golden = true;
        }
        if params.three_d && (params.turns > 1 || params.partitions > 1) {
            return Err(Error::invalid(
                OP,
                format!(
                    "-3 with -t {} -m {}: turns and partitions are not defined for the kooshball",
                    params.turns, params.partitions
                ),
            ));
        }
        if params.tiny_golden >= 1 {
            params.golden = true;
        }
        if params.golden {
            params.radial = true;
            params.tiny_golden = params.tiny_golden.max(1);
        } else if params.full_circle || params.three_d {
            params.radial = true;
        } else if !params.radial && (params.turns != 1 || params.partitions != 1) {
            return Err(Error::invalid(
                OP,
                format!(
                    "-t {} -m {}: turns and partitions need a radial trajectory (-r)",
                    params.turns, params.partitions
                ),
            ));
        }
        // BART 0.8 aborts on both (its sample count assertion): refused here with the reason.
        if params.radial && params.acceleration > 1 {
            return Err(Error::invalid(
                OP,
                format!("-a {}: acceleration is for Cartesian lines only", params.acceleration),
            ));
        }
        if !params.radial && !params.spokes.is_multiple_of(params.acceleration) {
            return Err(Error::invalid(
                OP,
                format!(
                    "-y {} -a {}: the lines must be a multiple of the acceleration",
                    params.spokes, params.acceleration
                ),
            ));
        }
        Ok(BartTrajectory { params, samples: samples as usize })
    }

    /// The parameters after BART's implications (e.g. `golden` set by `tiny_golden`).
    pub fn params(&self) -> &TrajectoryParams {
        &self.params
    }

    /// BART's output dimensions: [3, samples, lines] and, with turns or partitions, ones up to BART's time
    /// dimension (10) and slice dimension (13).
    pub fn shape(&self) -> Vec<usize> {
        let p = &self.params;
        let lines = if p.radial { p.spokes } else { p.spokes / p.acceleration };
        let mut shape = vec![3, self.samples, lines];
        if p.turns > 1 || p.partitions > 1 {
            shape.resize(SLICE_DIM + 1, 1);
            if let Some(t) = shape.get_mut(TIME_DIM) {
                *t = p.turns;
            }
            if let Some(m) = shape.get_mut(SLICE_DIM) {
                *m = p.partitions;
            }
        }
        shape
    }

    /// The coordinates, BART's layout (coordinate fastest in BART's column-major order: `k[[c, sample, line, …]]`).
    pub fn generate(&self) -> Result<ArrayD<f32>> {
        let shape = self.shape();
        let count = shape.iter().product::<usize>();
        crate::io::check_host_memory(std::path::Path::new("trajectory"), "the trajectory", (count as u64) * 8)?;
        // Column-major, as BART's loop writes it: sample fastest, then line, turn, partition.
        let mut values = Vec::with_capacity(count);
        let p = &self.params;
        let lines = shape.get(SPOKE_DIM).copied().unwrap_or(1);
        let angles = self.base_angles();
        for partition in 0..p.partitions {
            for turn in 0..p.turns {
                let mut previous_azimuth = 0.0;
                for line in 0..lines {
                    for sample in 0..self.samples {
                        let k = if p.radial {
                            let (k, azimuth) =
                                self.radial_sample(sample, line, turn, partition, angles, previous_azimuth);
                            if sample + 1 == self.samples {
                                previous_azimuth = azimuth;
                            }
                            k
                        } else {
                            self.cartesian_sample(sample, line)
                        };
                        values.extend(k.map(|c| (c / p.oversampling) as f32));
                    }
                }
            }
        }
        let column_major =
            ArrayD::from_shape_vec(IxDyn(&shape).f(), values).map_err(|e| Error::invalid(OP, e.to_string()))?;
        Ok(column_major.as_standard_layout().to_owned())
    }

    /// Cartesian: (i − ⌊X/2⌋, j − ⌊Y/2⌋, 0) with j the kept line's index (BART's integer halves).
    fn cartesian_sample(&self, sample: usize, line: usize) -> [f64; 3] {
        let j = line * self.params.acceleration;
        [sample as f64 - (self.samples / 2) as f64, j as f64 - (self.params.spokes / 2) as f64, 0.0]
    }

    /// One radial sample (before the division by the oversampling) and the azimuth of its spoke, which the
    /// kooshball's spiral needs for the next spoke.
    fn radial_sample(
        &self,
        sample: usize,
        line: usize,
        turn: usize,
        partition: usize,
        angles: BaseAngles,
        previous_azimuth: f64,
    ) -> ([f64; 3], f64) {
        let p = &self.params;
        let half = if p.asymmetric { 0.0 } else { 0.5 };
        let read = sample as f64 + half - self.samples as f64 / 2.0;
        let mut azimuth = line as f64 * angles.spoke + turn as f64 * angles.turn + partition as f64 * angles.partition;
        if p.half_circle_golden {
            azimuth %= PI;
        }
        azimuth += PI * p.rotation_degrees / 180.0;
        let mut elevation = 0.0;
        if p.three_d {
            (azimuth, elevation) = self.kooshball_angles(line, previous_azimuth);
        }
        // BART's euler() takes the angles as float: golden-angle sums of tens of radians lose ~1e-6 rad there,
        // and that is BART's trajectory, so the angles are rounded to f32 as BART passes them.
        let (phi, psi) = (f64::from(azimuth as f32), f64::from(elevation as f32));
        // dir = (cos φ cos ψ, sin φ cos ψ, sin ψ), written as (dir[1], dir[0], dir[2]).
        let k = [read * phi.sin() * psi.cos(), read * phi.cos() * psi.cos(), read * psi.sin()];
        (k, azimuth)
    }

    /// The kooshball's angles of line `line` (Saff and Kuijlaars's spiral on the sphere, as BART: the azimuth
    /// grows from the previous spoke's, the first and the `spokes`-th line lie on the pole axis).
    fn kooshball_angles(&self, line: usize, previous_azimuth: f64) -> (f64, f64) {
        let p = &self.params;
        let points = if p.full_circle { p.spokes } else { 2 * p.spokes } as f64;
        let height = -1.0 + 2.0 * line as f64 / (points - 1.0);
        let azimuth = if line + 1 == p.spokes || line == 0 {
            0.0
        } else {
            (previous_azimuth + 3.6 / (points * (1.0 - height * height)).sqrt()) % (2.0 * PI)
        };
        (azimuth, height.acos() - PI / 2.0)
    }

    /// BART's `calc_base_angles` for what this generator supports (no multi-echo, no compatibility modes).
    fn base_angles(&self) -> BaseAngles {
        let p = &self.params;
        let atom = PI / p.spokes as f64;
        let circle = if p.full_circle { 2.0 } else { 1.0 };
        if p.golden {
            let golden_angle = if p.tiny_golden == 1 {
                // BART's form for numerical stability: π (√5 − 1) / 2.
                PI * (2.0 - (3.0 - 5f64.sqrt())) / 2.0
            } else {
                PI / ((5f64.sqrt() + 1.0) / 2.0 + p.tiny_golden as f64 - 1.0)
            };
            let spokes = p.spokes as f64;
            return if p.aligned {
                BaseAngles { spoke: golden_angle, partition: 0.0, turn: golden_angle * spokes }
            } else {
                BaseAngles {
                    spoke: golden_angle,
                    partition: golden_angle * spokes,
                    turn: golden_angle * spokes * p.partitions as f64,
                }
            };
        }
        BaseAngles {
            spoke: atom * circle,
            partition: if p.aligned { 0.0 } else { atom / p.partitions as f64 },
            turn: if p.turns > 1 { atom / p.turns as f64 * circle } else { 0.0 },
        }
    }
}

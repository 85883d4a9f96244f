//! `cliper traj`: a k-space trajectory as `bart traj` (BART 0.8.00) writes it, on the host (no device needed).

use crate::failure::CliError;
use crate::recon::bart_named;
use clap::Args;
use cliper::chain::RunFiles;
use cliper::{BartTrajectory, HostArray, TrajectoryParams, write_file};
use std::path::Path;

/// `bart traj`'s options under long names; each help names its BART letter.
#[derive(Args)]
pub struct TrajArgs {
    /// The trajectory file: [3, samples, spokes(, …)] in cycles per FOV. A name without an extension is a CFL
    /// pair as BART writes (`t` → t.cfl, t.hdr); other extensions (.npy, …) hold the real values.
    output: String,
    /// Readout samples (bart -x).
    #[arg(short = 'x', long, default_value_t = 128)]
    readout: usize,
    /// Phase-encoding lines or spokes (bart -y).
    #[arg(short = 'y', long, default_value_t = 128)]
    spokes: usize,
    /// Acceleration, Cartesian only: every a-th line (bart -a).
    #[arg(short = 'a', long, default_value_t = 1)]
    acceleration: usize,
    /// Turns: the spokes repeated, each turn rotated by a fraction of the angle step (bart -t).
    #[arg(short = 't', long, default_value_t = 1)]
    turns: usize,
    /// SMS multiband factor / stack-of-stars partitions (bart -m).
    #[arg(short = 'm', long, default_value_t = 1)]
    partitions: usize,
    /// The same angles in every partition (bart -l).
    #[arg(short = 'l', long)]
    aligned: bool,
    /// Radial (bart -r).
    #[arg(short = 'r', long)]
    radial: bool,
    /// Golden-ratio angle increments (bart -G); implies --radial.
    #[arg(short = 'G', long)]
    golden: bool,
    /// Golden ratio folded into [0°, 180°) (bart -H); implies --golden.
    #[arg(short = 'H', long)]
    half_circle_golden: bool,
    /// Tiny golden angle number N: increments of π / (φ + N − 1) (bart -s); implies --golden.
    #[arg(short = 's', long, default_value_t = 0, value_name = "N")]
    tiny_golden: usize,
    /// Spoke angles over [0°, 360°) instead of [0°, 180°) (bart -D).
    #[arg(short = 'D', long)]
    full_circle: bool,
    /// Readout oversampling factor: ⌊x · o⌋ samples, coordinates divided by o (bart -o).
    #[arg(short = 'o', long, default_value_t = 1.0)]
    oversampling: f64,
    /// Rotate every spoke by this many degrees (bart -R).
    #[arg(short = 'R', long, default_value_t = 0.0, value_name = "DEGREES", allow_negative_numbers = true)]
    rotate: f64,
    /// 3-D kooshball: spokes over a half sphere (the whole sphere with --full-circle) (bart -3).
    #[arg(short = '3', long = "3d")]
    three_d: bool,
    /// Asymmetric readout that samples k = 0 at sample ⌊samples/2⌋ (bart -c).
    #[arg(short = 'c', long)]
    asymmetric: bool,
}

impl TrajArgs {
    fn params(&self) -> TrajectoryParams {
        TrajectoryParams {
            readout: self.readout,
            spokes: self.spokes,
            acceleration: self.acceleration,
            turns: self.turns,
            partitions: self.partitions,
            aligned: self.aligned,
            radial: self.radial,
            golden: self.golden,
            half_circle_golden: self.half_circle_golden,
            tiny_golden: self.tiny_golden,
            full_circle: self.full_circle,
            oversampling: self.oversampling,
            rotation_degrees: self.rotate,
            three_d: self.three_d,
            asymmetric: self.asymmetric,
        }
    }
}

/// Generates the trajectory (refusing what `bart traj` refuses or aborts on before any file is touched) and
/// writes it.
pub fn run(args: &TrajArgs) -> Result<(), CliError> {
    let output = bart_named(&args.output);
    let path = Path::new(&output);
    RunFiles::default().write("the trajectory", path).check()?;
    let trajectory = BartTrajectory::new(args.params())?;
    let values = trajectory.generate()?;
    cliper::chain::create_parent(path)?;
    write_file(path, &HostArray::F32(values))?;
    say!("traj: wrote {:?} to {output}", trajectory.shape());
    Ok(())
}

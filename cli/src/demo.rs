//! `cliper demo`: the README's main job — the pipeline in `pipelines/demo.toml` on the sample phantom.

use crate::chain::Context;
use crate::failure::CliError;
use clap::Args;
use cliper::chain::Chain;
use std::path::Path;

/// The demo pipeline, built into the binary so `cliper demo` runs from anywhere the data is.
const DEMO: &str = include_str!("../../pipelines/demo.toml");

#[derive(Args)]
pub struct DemoArgs {
    /// The image to process (default: the sample phantom).
    #[arg(long, default_value = "data/phantom_256.png")]
    input: String,
    /// Directory for the results.
    #[arg(long, default_value = "out")]
    out: String,
}

pub fn run(ctx: &mut Context, args: &DemoArgs) -> Result<(), CliError> {
    let mut chain = Chain::from_toml(DEMO, Path::new("pipelines/demo.toml"))?;
    if !Path::new(&args.input).exists() {
        return Err(cliper::Error::invalid(
            "demo",
            format!("{} does not exist; run from the repository root or pass --input IMAGE", args.input),
        )
        .into());
    }
    chain.set_input(&format!("image={}", args.input))?;
    // The file's outputs are relative to pipelines/: keep their names, in --out.
    for (_, path, _) in &mut chain.outputs {
        let name = Path::new(path.as_str()).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        *path = Path::new(&args.out).join(name).to_string_lossy().into_owned();
    }
    let app = ctx.app()?;
    let d = app.device();
    if !ctx.json {
        say!("cliper demo on {} ({}, {}, {})", d.name, d.kind, d.platform_name, d.version);
        say!("pipeline: pad 8 (symmetric) → Gaussian σ=2 (valid) → Sobel x → transpose → row norms, and the norm");
        say!("input: {}\n", args.input);
    }
    ctx.profile = true;
    crate::ranks::run_and_report(ctx, &chain)
}

//! The `cliper` command line.

mod demo;

use clap::{Parser, Subcommand};
use cliper::ClApp;
use std::process::ExitCode;

/// cliper: OpenCL image processing for medical and scientific data.
///
/// The device is the best one found (GPU, then accelerator, then CPU) unless CLIPER_DEVICE selects another:
/// `gpu`, `cpu`, an index pair `P:D` as `cliper devices` prints it, or part of the device's name.
#[derive(Parser)]
#[command(name = "cliper", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List every OpenCL platform and device; `*` marks the one cliper would use.
    Devices,
    /// Build a Shepp-Logan phantom volume on the device, reslice it through a chain of processes, read it back
    /// once, check it against a CPU reference and print the profile.
    Demo(demo::DemoArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Devices => devices(),
        Command::Demo(args) => demo::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                eprintln!("  caused by: {s}");
                source = s.source();
            }
            ExitCode::FAILURE
        }
    }
}

fn devices() -> cliper::Result<()> {
    let devices = ClApp::devices()?;
    println!(
        "  {:<5} {:<11} {:<36} {:<30} {:<18} {:>4} {:>5} {:>9} {:>7} {:>6} {:>4}",
        "id", "kind", "device", "platform", "version", "CUs", "MHz", "memory", "local", "max WG", "fp64"
    );
    for d in &devices {
        println!(
            "{} {:<5} {:<11} {:<36} {:<30} {:<18} {:>4} {:>5} {:>9} {:>7} {:>6} {:>4}",
            if d.preferred { "*" } else { " " },
            d.id(),
            d.kind.to_string(),
            clip(&d.name, 36),
            clip(&d.platform_name, 30),
            clip(&d.version, 18),
            d.compute_units,
            d.clock_mhz,
            format!("{:.1} GiB", d.global_mem_bytes as f64 / (1u64 << 30) as f64),
            format!("{} KiB", d.local_mem_bytes / 1024),
            d.max_work_group_size,
            if d.fp64 { "yes" } else { "no" }
        );
    }
    if !devices.iter().any(|d| d.preferred) {
        // Only possible when CLIPER_DEVICE matches nothing; ClApp::new() gives the full error.
        ClApp::new()?;
    }
    Ok(())
}

fn clip(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let mut c: String = s.chars().take(width - 1).collect();
        c.push('…');
        c
    }
}

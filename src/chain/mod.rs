//! Chains of operations on files, as the `cliper` command line runs them (feature `chain`): arrays whose element
//! type comes from a file ([`AnyData`]), the operations a pipeline file names ([`Op`]), pipeline files
//! ([`Chain`], docs/cli.md) and running them once or over a batch of files with the arrays kept on the device.
//!
//! ```
//! use cliper::chain::Chain;
//! let chain = Chain::from_file("pipelines/demo.toml".as_ref())?;
//! let app = cliper::ClApp::new()?;
//! let outcome = Chain { outputs: Vec::new(), ..chain }.run(&app, None, false, |_| {})?;
//! let record = &outcome.records[0];
//! assert_eq!(record.transfers, 0); // nothing crossed to the host between the steps
//! assert!(record.values.iter().any(|(name, shape, _, _)| name == "edge_energy" && shape.is_empty()));
//! # Ok::<(), cliper::Error>(())
//! ```

mod any_data;
mod ops;
mod overlap;
mod paths;
mod pipeline_file;
mod run;
mod shard;
mod tiled;

pub use any_data::{AnyData, ElementKind, FileSpec, Kind, Origin, OutputOptions, Precision, kind_for, save_converted};
pub use ops::*;
pub use paths::RunFiles;
pub use pipeline_file::{Chain, Step};
pub use run::{BatchInput, ChainRunner, Outcome, Progress, RunRecord, create_parent, output_path};
pub use shard::Shard;
pub use tiled::{TileInput, TilePlan, TileProgress, TileTiming, TiledOutcome};

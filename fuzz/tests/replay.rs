//! Replays the fuzz corpora (fuzz/seeds: hand-made and real files; fuzz/corpus: what `cargo fuzz` found and
//! kept, minimised) through the same loader calls the fuzz targets make (the `cliper_fuzz` harness). Every
//! input must return (Ok or a typed error) without a panic, and quickly; every seed whose name does not start
//! with `invalid_` must load. docs/reliability.md says how the corpora were grown.

use std::path::Path;
use std::time::{Duration, Instant};

/// One input may take this long: each loads in well under a millisecond when compiled with optimisations,
/// and the bound is loose enough for an unoptimised build on a loaded 2-core machine; a hang or a decoder
/// that goes quadratic misses it by orders of magnitude.
const SLOWEST: Duration = Duration::from_secs(2);

fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = match std::fs::read_dir(dir) {
        Ok(entries) => entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_file()).collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    files
}

#[test]
fn every_corpus_input_returns_without_a_panic_and_every_valid_seed_loads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf();
    let mut replayed = 0;
    for (target, run) in cliper_fuzz::TARGETS {
        let seeds = files(&root.join("seeds").join(target));
        assert!(seeds.len() >= 3, "fuzz/seeds/{target} should hold its seed corpus");
        for path in seeds.iter().chain(&files(&root.join("corpus").join(target))) {
            let data = std::fs::read(path).unwrap();
            let start = Instant::now();
            let loaded = run(&data);
            let took = start.elapsed();
            assert!(took < SLOWEST, "{} took {took:?}", path.display());
            let name = path.file_name().unwrap().to_string_lossy();
            let is_seed = path.parent().is_some_and(|p| p.ends_with(Path::new("seeds").join(target)));
            if is_seed {
                assert_eq!(loaded, !name.starts_with("invalid_"), "seed {} loaded: {loaded}", path.display());
            }
            replayed += 1;
        }
    }
    eprintln!("replayed {replayed} corpus inputs");
}

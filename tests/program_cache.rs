//! The on-disk program cache with the real driver: a second app (a second process, as far as the cache can tell)
//! loads the first one's binary instead of compiling; a corrupt entry, and an intact entry whose binary the driver
//! refuses, are both replaced by a fresh compile that works; the cap holds. (Keys, concurrent writers, truncation
//! and driver changes: src/app/program_cache.rs's unit tests.)

use cliper::{ClApp, ProgramCache, XData};

fn app_with(cache: &ProgramCache) -> ClApp {
    ClApp::builder().use_env(true).program_cache(Some(cache.clone())).build().unwrap()
}

fn scratch(name: &str) -> ProgramCache {
    let dir = std::env::temp_dir().join(format!("cliper-program-cache-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    ProgramCache::at(dir, 64)
}

/// A program no other test builds (its constant is unique), and whether running it doubles.
fn source(tag: u64) -> String {
    format!("kernel void twice(global float *x) {{ x[get_global_id(0)] *= 2.0f; /* {tag} */ }}")
}

fn works(app: &ClApp, program: &cliper::Program) {
    let x = XData::from_slice(app, &[3], &[1.0f32, 2.0, 3.0]).unwrap();
    program.kernel("twice").unwrap().launch().in_out("x", &x).global(&[3]).enqueue().unwrap();
    assert_eq!(x.to_vec().unwrap(), vec![2.0, 4.0, 6.0]);
}

#[test]
fn a_second_app_loads_the_binary_instead_of_compiling() {
    let cache = scratch("second");
    let tag = std::process::id() as u64 * 1000 + 1;
    let first = app_with(&cache);
    let p = first.build_program("twice", &source(tag), "").unwrap();
    assert!(!p.from_disk_cache());
    works(&first, &p);
    assert_eq!(cache.info().unwrap().entries, 1);
    let second = app_with(&cache);
    let p = second.build_program("twice", &source(tag), "").unwrap();
    assert!(p.from_disk_cache(), "the second app compiled again");
    works(&second, &p);
    // Other options: another entry.
    let p = second.build_program("twice", &source(tag), "-DUNUSED=1").unwrap();
    assert!(!p.from_disk_cache());
    assert_eq!(cache.info().unwrap().entries, 2);
    // No cache: compiled, nothing stored.
    let none = ClApp::builder().use_env(true).program_cache(None).build().unwrap();
    assert!(!none.build_program("twice", &source(tag), "").unwrap().from_disk_cache());
    cache.clear().unwrap();
}

#[test]
fn damaged_and_refused_entries_are_compiled_again() {
    let cache = scratch("damaged");
    let tag = std::process::id() as u64 * 1000 + 2;
    app_with(&cache).build_program("twice", &source(tag), "").unwrap();
    let entry = std::fs::read_dir(cache.dir()).unwrap().next().unwrap().unwrap().path();
    let original = std::fs::read(&entry).unwrap();
    // A flipped byte in the binary: the checksum refuses it; the compile that follows works and is stored again.
    let mut bytes = original.clone();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x5A;
    std::fs::write(&entry, &bytes).unwrap();
    let app = app_with(&cache);
    let p = app.build_program("twice", &source(tag), "").unwrap();
    assert!(!p.from_disk_cache());
    works(&app, &p);
    // … and stored again: the next app loads it (drivers' binaries are not byte-for-byte repeatable).
    assert!(app_with(&cache).build_program("twice", &source(tag), "").unwrap().from_disk_cache());
    let original = std::fs::read(&entry).unwrap();
    // An intact entry (right identity, right checksum) holding a binary the driver cannot use: refused by the
    // driver, removed, compiled again.
    let text = String::from_utf8_lossy(&original).to_string();
    let header_end = text.find("--\n").unwrap() + 3;
    let garbage = b"this is not a program binary".to_vec();
    let digest: String = {
        use std::fmt::Write;
        let d = <sha2::Sha256 as sha2::Digest>::digest(&garbage);
        d.iter().fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
    };
    let mut forged = original[..header_end].to_vec();
    forged.extend_from_slice(format!("{digest}\n{}\n", garbage.len()).as_bytes());
    forged.extend_from_slice(&garbage);
    std::fs::write(&entry, &forged).unwrap();
    let app = app_with(&cache);
    let p = app.build_program("twice", &source(tag), "").unwrap();
    assert!(!p.from_disk_cache());
    works(&app, &p);
    cache.clear().unwrap();
}

//! Replays the committed cargo-fuzz corpus (`fuzz/corpus/<target>/`) through the same property
//! checks the fuzz targets run, so CI re-checks every input found so far without cargo-fuzz.

// clippy's allowance for tests covers `#[test]` functions, not this crate's helpers.
#![allow(clippy::unwrap_used, clippy::panic)]

#[path = "../../../fuzz/props.rs"]
mod props;

use std::path::PathBuf;

/// The corpus files of one target, sorted; at least `min` of them (a lost corpus fails).
fn corpus(target: &str, min: usize) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    assert!(
        files.len() >= min,
        "{}: {} files",
        dir.display(),
        files.len()
    );
    files
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect()
}

fn replay(target: &str, check: fn(&[u8])) {
    for (path, bytes) in corpus(target, 100) {
        let outcome = std::panic::catch_unwind(|| check(&bytes));
        assert!(outcome.is_ok(), "{target}: {} fails", path.display());
    }
}

#[test]
fn hal_corpus_holds() {
    replay("hal", props::hal);
}

#[test]
fn template_corpus_holds() {
    replay("template", props::template);
}

//! Fingerprints the simulator's source so that every build that can change results reports a
//! different version (`mpsim::VERSION`): campaign stores key runs by it and re-run what an
//! older model produced. FNV-1a over the sorted paths and contents of `src/`.

use std::path::{Path, PathBuf};

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).expect("readable source directory");
    for entry in entries {
        let path = entry.expect("readable directory entry").path();
        if path.is_dir() {
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}

fn main() {
    let src = Path::new("src");
    println!("cargo:rerun-if-changed=src");
    let mut files = Vec::new();
    collect(src, &mut files);
    files.sort();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for file in &files {
        let name = file.strip_prefix(src).expect("under src").to_string_lossy();
        let content = std::fs::read(file).expect("readable source file");
        for byte in name.bytes().chain([0u8]).chain(content).chain([0u8]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    println!("cargo:rustc-env=MPSIM_SOURCE_HASH={:012x}", hash >> 16);
}

//! Prints a digest of the report of each scenario file given (JSON, or TOML by extension), so
//! that a change meant to leave results alone (a speed-up, a refactoring) can be checked
//! against the build before it: same digests, same reports bit for bit.
//!
//! `cargo run --release -p mpsim --example report_digest -- scenarios/*.toml > digests.txt`

use std::process::ExitCode;

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn load(path: &str) -> Result<mpsim::Scenario, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    if !path.ends_with(".toml") {
        return mpsim::Scenario::from_json(&text).map_err(|e| format!("{path}: {e}"));
    }
    let scenario: mpsim::Scenario = toml::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    scenario.validate().map_err(|e| format!("{path}: {e}"))?;
    Ok(scenario)
}

fn main() -> ExitCode {
    let mut failed = false;
    for path in std::env::args().skip(1) {
        match load(&path) {
            Ok(scenario) => {
                let report = mpsim::sim::run(&scenario);
                let mut value = serde_json::to_value(&report).expect("report serialises");
                // The version carries a hash of the source, which any change alters.
                if let Some(map) = value.as_object_mut() {
                    map.remove("mpsim_version");
                }
                let text = serde_json::to_string(&value).expect("report serialises");
                println!(
                    "{:016x} {:>9} {path}",
                    fnv1a(text.as_bytes()),
                    report.events
                );
            }
            Err(message) => {
                eprintln!("{message}");
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

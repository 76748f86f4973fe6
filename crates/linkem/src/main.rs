//! `linkem --config FILE`: create the TUN devices of one emulated network, print one line
//! `{"ready": true, ...}` on standard output, forward packets until SIGTERM, write the final
//! status file and exit. SIGUSR1 writes a status snapshot.
//!
//! `linkem normalize`: read a scenario (JSON) on standard input, validate it with the
//! simulator's own rules, and print it back with every default filled in (exit 2 if invalid).

use linkem::config::Config;
use linkem::emulator::Emulator;
use linkem::sys;
use std::io::{Read, Write};
use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!("usage: linkem --config FILE | linkem normalize < scenario.json");
    ExitCode::from(2)
}

fn normalize() -> ExitCode {
    let mut text = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut text) {
        eprintln!("reading standard input: {e}");
        return ExitCode::from(2);
    }
    match mpsim::Scenario::from_json(&text) {
        Ok(s) => {
            println!(
                "{}",
                serde_json::to_string(&s).expect("a scenario serialises")
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

fn run(path: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let cfg: Config = serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    cfg.validate().map_err(|e| format!("{path}: {e}"))?;
    if !sys::process::die_with_parent(libc::SIGTERM).map_err(|e| e.to_string())? {
        return Err("parent already exited".into());
    }
    let mut emu = Emulator::new(cfg).map_err(|e| format!("setting up: {e}"))?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{{\"ready\": true, \"pid\": {}}}", std::process::id())
            .and_then(|_| out.flush())
            .map_err(|e| e.to_string())?;
    }
    emu.run().map_err(|e| format!("running: {e}"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("normalize") => normalize(),
        Some("--config") if args.len() == 3 => match run(&args[2]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("linkem: {e}");
                ExitCode::from(1)
            }
        },
        _ => usage(),
    }
}

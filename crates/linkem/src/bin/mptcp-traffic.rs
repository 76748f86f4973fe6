//! `mptcp-traffic server --config FILE` / `mptcp-traffic client --config FILE`: the traffic
//! program of the emulator backend (see `linkem::traffic`).

use linkem::sys;
use linkem::traffic::{client, server};
use std::process::ExitCode;

fn load<T: serde::de::DeserializeOwned>(path: &str) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 || args[2] != "--config" {
        eprintln!("usage: mptcp-traffic server|client --config FILE");
        return ExitCode::from(2);
    }
    match sys::process::die_with_parent(libc::SIGTERM) {
        Ok(true) => {}
        _ => return ExitCode::from(1),
    }
    if let Err(e) = sys::process::raise_open_file_limit() {
        eprintln!(
            "mptcp-traffic {}: raising the open-file limit: {e}",
            args[1]
        );
        return ExitCode::from(1);
    }
    let result = match args[1].as_str() {
        "server" => load::<server::ServerConfig>(&args[3]).and_then(|c| {
            c.validate().map_err(|e| format!("{}: {e}", args[3]))?;
            server::run(&c).map_err(|e| e.to_string())
        }),
        "client" => load::<client::ClientConfig>(&args[3]).and_then(|c| {
            c.validate().map_err(|e| format!("{}: {e}", args[3]))?;
            client::run(&c).map_err(|e| e.to_string())
        }),
        _ => {
            eprintln!("usage: mptcp-traffic server|client --config FILE");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mptcp-traffic {}: {e}", args[1]);
            ExitCode::from(1)
        }
    }
}

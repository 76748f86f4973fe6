//! Checks of the traffic program's configuration files. The emulator backend writes them from
//! scenarios it has already validated, but the program is also run by hand: a zero block size
//! would divide by zero, a buffer above 2^31−1 would wrap to a negative socket option, and a
//! NaN time would end the run at once.

use super::client::ClientConfig;
use super::server::ServerConfig;
use mpsim::scenario::AppSpec;

fn finite_at_least(field: &str, v: f64, min: f64) -> Result<(), String> {
    if v.is_finite() && v >= min {
        Ok(())
    } else {
        Err(format!(
            "{field}: expected a finite number ≥ {min}, got {v}"
        ))
    }
}

fn times(duration_s: f64, warmup_s: f64, sample_interval_ms: f64) -> Result<(), String> {
    if !(duration_s.is_finite() && duration_s > 0.0) {
        return Err(format!(
            "duration_s: expected seconds > 0, got {duration_s}"
        ));
    }
    finite_at_least("warmup_s", warmup_s, 0.0)?;
    if warmup_s >= duration_s {
        return Err(format!(
            "warmup_s: expected less than duration_s ({duration_s}), got {warmup_s}"
        ));
    }
    if !(sample_interval_ms.is_finite() && sample_interval_ms > 0.0) {
        return Err(format!(
            "sample_interval_ms: expected milliseconds > 0, got {sample_interval_ms}"
        ));
    }
    Ok(())
}

fn app(app: &AppSpec) -> Result<(), String> {
    match app {
        AppSpec::Blocks { block_bytes: 0 } => Err("app.block_bytes: expected ≥ 1 byte".into()),
        AppSpec::Size { bytes: 0 } => Err("app.bytes: expected ≥ 1 byte".into()),
        _ => Ok(()),
    }
}

/// A socket buffer as the `int` the socket option takes.
pub fn buffer(field: &str, bytes: Option<u64>) -> Result<Option<i32>, String> {
    bytes
        .map(|b| {
            i32::try_from(b)
                .map_err(|_| format!("{field}: expected at most {} bytes, got {b}", i32::MAX))
        })
        .transpose()
}

impl ClientConfig {
    pub fn validate(&self) -> Result<(), String> {
        times(self.duration_s, self.warmup_s, self.sample_interval_ms)?;
        app(&self.app)?;
        buffer("sndbuf_bytes", self.sndbuf_bytes)?;
        for (i, f) in self.flows.iter().enumerate() {
            finite_at_least(&format!("flows[{i}].start_s"), f.start_s, 0.0)?;
            if let Some(stop) = f.stop_s {
                finite_at_least(&format!("flows[{i}].stop_s"), stop, f.start_s)?;
            }
        }
        Ok(())
    }
}

impl ServerConfig {
    pub fn validate(&self) -> Result<(), String> {
        times(self.duration_s, self.warmup_s, self.sample_interval_ms)?;
        app(&self.app)?;
        buffer("rcvbuf_bytes", self.rcvbuf_bytes)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(edit: &str) -> Result<(), String> {
        let mut v: serde_json::Value = serde_json::json!({
            "netns": null, "server": "10.0.0.1:5001", "bind": "10.0.1.1",
            "transport": "mptcp", "flows": [{"index": 0, "start_s": 0.0, "stop_s": 2.0}],
            "app": {"kind": "blocks", "block_bytes": 1000}, "duration_s": 5.0,
            "warmup_s": 1.0, "sample_interval_ms": 100.0, "out": "/tmp/x.json"
        });
        let (path, value) = edit.split_once('=').unwrap_or(("", ""));
        if !path.is_empty() {
            let target = path
                .split('.')
                .fold(&mut v, |node, key| match key.parse::<usize>() {
                    Ok(i) => &mut node[i],
                    Err(_) => &mut node[key],
                });
            *target = serde_json::from_str(value).unwrap();
        }
        let cfg: ClientConfig = serde_json::from_value(v).map_err(|e| e.to_string())?;
        cfg.validate()
    }

    #[test]
    fn a_sound_client_config_passes() {
        assert_eq!(client(""), Ok(()));
    }

    #[test]
    fn bad_client_configs_name_their_field() {
        for (edit, field) in [
            ("app.block_bytes=0", "app.block_bytes"),
            ("duration_s=0", "duration_s"),
            ("warmup_s=5.0", "warmup_s"),
            ("warmup_s=-1", "warmup_s"),
            ("sample_interval_ms=0", "sample_interval_ms"),
            ("sndbuf_bytes=2147483648", "sndbuf_bytes"),
            ("flows.0.start_s=-0.5", "flows[0].start_s"),
            ("flows.0.stop_s=-1.0", "flows[0].stop_s"),
        ] {
            let e = client(edit).expect_err(edit);
            assert!(e.starts_with(&format!("{field}:")), "{edit}: {e}");
        }
    }

    #[test]
    fn server_buffer_above_int_max_is_refused() {
        let cfg: ServerConfig = serde_json::from_value(serde_json::json!({
            "netns": null, "listen": "10.0.0.1:5001", "transport": "tcp",
            "rcvbuf_bytes": 4294967296u64, "app": {"kind": "bulk"}, "warmup_s": 0.0,
            "duration_s": 1.0, "sample_interval_ms": 100.0, "out": "/tmp/x.json"
        }))
        .unwrap();
        assert!(cfg.validate().unwrap_err().starts_with("rcvbuf_bytes:"));
        assert_eq!(buffer("b", Some(i32::MAX as u64)), Ok(Some(i32::MAX)));
    }
}

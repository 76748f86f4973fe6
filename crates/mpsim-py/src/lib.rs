//! The one place where Rust meets Python (STYLE.md, polars): `run(scenario_json) -> report_json`.
//! Rust errors become Python exceptions here and nowhere else. The simulation runs with the GIL
//! released, so a thread pool can run several at once.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use std::time::{Duration, Instant};

use mpsim::time::SimTime;

create_exception!(
    _mpsim,
    ScenarioError,
    PyException,
    "The scenario is invalid."
);

/// Parse and validate a scenario, mapping a Rust `ScenarioError` to the Python one with its
/// `field` and `detail` attributes.
fn parse(py: Python<'_>, scenario_json: &str) -> PyResult<mpsim::Scenario> {
    mpsim::Scenario::from_json(scenario_json).map_err(|e| {
        let err = ScenarioError::new_err(e.to_string());
        let value = err.value(py);
        // Setting attributes on a fresh exception instance cannot fail in practice; if it
        // did, the message still carries the field.
        let _ = value.setattr("field", e.field.clone());
        let _ = value.setattr("detail", e.message.clone());
        err
    })
}

/// How finely a run with a progress callback is sliced, in parts of its simulated duration.
const PROGRESS_SLICES: u64 = 1000;
/// The least wall time between two progress calls, so that a short run costs no Python calls.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

/// Run a scenario given as JSON text; return the report as JSON text. `wall_s`, the only
/// non-deterministic field, is measured here, outside the simulator core.
///
/// `progress`, when given, is called as `progress(simulated_s, duration_s, events)` at most
/// every 100 ms of wall time and once at the end; an exception it raises stops the run and is
/// raised from here. Slicing the run for it does not change the report.
#[pyfunction]
#[pyo3(signature = (scenario_json, progress=None))]
fn run(py: Python<'_>, scenario_json: &str, progress: Option<PyObject>) -> PyResult<String> {
    let scenario = parse(py, scenario_json)?;
    let (report, wall_s) = py.allow_threads(|| -> PyResult<_> {
        let started = Instant::now();
        let report = match progress {
            None => mpsim::sim::run(&scenario),
            Some(callback) => run_reporting(&scenario, &callback)?,
        };
        Ok((report, started.elapsed().as_secs_f64()))
    })?;
    let mut value = serde_json::to_value(&report)
        .map_err(|e| PyException::new_err(format!("report serialisation failed: {e}")))?;
    value["wall_s"] = serde_json::json!(wall_s);
    Ok(value.to_string())
}

/// Run in slices of simulated time, calling `callback` between them (with the GIL, which the
/// simulation itself does not hold).
fn run_reporting(scenario: &mpsim::Scenario, callback: &PyObject) -> PyResult<mpsim::Report> {
    let mut sim = mpsim::sim::Simulator::new(scenario);
    let end = sim.end();
    let report = |sim: &mpsim::sim::Simulator<'_>, at: SimTime| {
        Python::with_gil(|py| {
            callback
                .call1(
                    py,
                    (at.as_secs_f64(), end.as_secs_f64(), sim.events_processed()),
                )
                .map(|_| ())
        })
    };
    let mut last_call = Instant::now();
    for slice in 1..=PROGRESS_SLICES {
        // u128: a duration of days in nanoseconds times the slice count overflows u64.
        let at = SimTime((end.0 as u128 * slice as u128 / PROGRESS_SLICES as u128) as u64);
        sim.run_until(at);
        if last_call.elapsed() >= PROGRESS_INTERVAL || slice == PROGRESS_SLICES {
            report(&sim, at)?;
            last_call = Instant::now();
        }
    }
    Ok(sim.run())
}

/// Validate a scenario given as JSON text without running it.
#[pyfunction]
fn validate(py: Python<'_>, scenario_json: &str) -> PyResult<()> {
    parse(py, scenario_json).map(|_| ())
}

#[pymodule]
fn _mpsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("__version__", mpsim::VERSION)?;
    m.add("FORMAT_VERSION", mpsim::report::FORMAT_VERSION)?;
    Ok(())
}

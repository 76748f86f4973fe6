//! The one place where Rust meets Python (STYLE.md, polars): `run(scenario_json) -> report_json`.
//! Rust errors become Python exceptions here and nowhere else. The simulation runs with the GIL
//! released, so a thread pool can run several at once.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

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

/// Run a scenario given as JSON text; return the report as JSON text. `wall_s`, the only
/// non-deterministic field, is measured here, outside the simulator core.
#[pyfunction]
fn run(py: Python<'_>, scenario_json: &str) -> PyResult<String> {
    let scenario = parse(py, scenario_json)?;
    let (report, wall_s) = py.allow_threads(|| {
        let started = std::time::Instant::now();
        let report = mpsim::sim::run(&scenario);
        (report, started.elapsed().as_secs_f64())
    });
    let mut value = serde_json::to_value(&report)
        .map_err(|e| PyException::new_err(format!("report serialisation failed: {e}")))?;
    value["wall_s"] = serde_json::json!(wall_s);
    Ok(value.to_string())
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

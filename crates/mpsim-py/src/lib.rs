//! The one place where Rust meets Python (STYLE.md, polars): `run(scenario_json) -> report_json`.
//! Rust errors become Python exceptions here and nowhere else. The simulation runs with the GIL
//! released, so a thread pool can run several at once.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(_mpsim, ScenarioError, PyException, "The scenario is invalid.");

/// Run a scenario given as JSON text; return the report as JSON text. `wall_s`, the only
/// non-deterministic field, is measured here, outside the simulator core.
#[pyfunction]
fn run(py: Python<'_>, scenario_json: &str) -> PyResult<String> {
    let scenario = mpsim::Scenario::from_json(scenario_json).map_err(|e| {
        let err = ScenarioError::new_err(e.to_string());
        let _ = err.value_bound(py).setattr("field", e.field.clone());
        let _ = err.value_bound(py).setattr("detail", e.message.clone());
        err
    })?;
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
    mpsim::Scenario::from_json(scenario_json).map_err(|e| {
        let err = ScenarioError::new_err(e.to_string());
        let _ = err.value_bound(py).setattr("field", e.field.clone());
        let _ = err.value_bound(py).setattr("detail", e.message.clone());
        err
    })?;
    Ok(())
}

#[pymodule]
fn _mpsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add("ScenarioError", m.py().get_type_bound::<ScenarioError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("FORMAT_VERSION", mpsim::report::FORMAT_VERSION)?;
    Ok(())
}

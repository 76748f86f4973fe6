//! The one place where Rust meets Python (STYLE.md, polars): `run(scenario_json) -> report_json`.
//! Rust errors become Python exceptions here and nowhere else. The simulation and the writing of
//! its report run with the GIL released, so a thread pool can run several at once.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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

/// How finely a run is sliced, in parts of its simulated duration: between slices the run
/// hears of Ctrl-C and calls its progress callback. Slicing does not change the report.
const SLICES: u64 = 1000;
/// The least wall time between two visits to Python, so that a short run costs no Python calls.
const PYTHON_INTERVAL: Duration = Duration::from_millis(100);

/// Set by an `atexit` hook once the interpreter has begun to exit.
static INTERPRETER_EXITING: AtomicBool = AtomicBool::new(false);
/// Threads of runs between deciding to take the GIL and having it.
static WAITING_FOR_GIL: AtomicUsize = AtomicUsize::new(0);

/// A thread still simulating when the interpreter exits (a daemon thread) must not take the GIL
/// once the interpreter finalises: CPython ends such a thread with `pthread_exit`, whose forced
/// unwinding through these frames aborts the whole process. At exit (before finalisation) this
/// hook lets the threads already waiting for the GIL have it, and every later one waits in
/// `before_taking_the_gil` until the process ends.
#[pyfunction]
fn mark_interpreter_exiting(py: Python<'_>) {
    INTERPRETER_EXITING.store(true, Ordering::SeqCst);
    py.allow_threads(|| {
        while WAITING_FOR_GIL.load(Ordering::SeqCst) > 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
}

/// Called before a run's thread takes the GIL, `gil_taken` once it has it. Counted before the
/// flag is read, so that the exit hook either sees the thread waiting or the thread sees the
/// flag.
fn before_taking_the_gil() {
    WAITING_FOR_GIL.fetch_add(1, Ordering::SeqCst);
    if INTERPRETER_EXITING.load(Ordering::SeqCst) {
        WAITING_FOR_GIL.fetch_sub(1, Ordering::SeqCst);
        loop {
            std::thread::park();
        }
    }
}

fn gil_taken() {
    WAITING_FOR_GIL.fetch_sub(1, Ordering::SeqCst);
}

/// The report with the run's wall time, the only non-deterministic field, measured here
/// outside the simulator core.
#[derive(Serialize)]
struct TimedReport<'a> {
    #[serde(flatten)]
    report: &'a mpsim::Report,
    wall_s: f64,
}

/// Run a scenario given as JSON text; return the report as JSON text, built without the GIL
/// (a large trace takes a while to write).
///
/// The run stops with `KeyboardInterrupt` at the first slice after a Ctrl-C. `progress`, when
/// given, is called as `progress(simulated_s, duration_s, events)` at most every 100 ms of wall
/// time and once at the end; an exception it raises stops the run and is raised from here.
#[pyfunction]
#[pyo3(signature = (scenario_json, progress=None))]
fn run(py: Python<'_>, scenario_json: &str, progress: Option<PyObject>) -> PyResult<String> {
    let scenario = parse(py, scenario_json)?;
    let text = py.allow_threads(|| {
        let text = run_to_text(&scenario, progress.as_ref());
        // Leaving allow_threads takes the GIL back, as any error's way out does.
        before_taking_the_gil();
        text
    });
    gil_taken();
    text
}

fn run_to_text(scenario: &mpsim::Scenario, progress: Option<&PyObject>) -> PyResult<String> {
    let started = Instant::now();
    let report = run_sliced(scenario, progress)?;
    let wall_s = started.elapsed().as_secs_f64();
    serde_json::to_string(&TimedReport {
        report: &report,
        wall_s,
    })
    .map_err(|e| PyException::new_err(format!("report serialisation failed: {e}")))
}

/// Run in slices of simulated time, visiting Python between them (with the GIL, which the
/// simulation itself does not hold) for pending signals and the progress callback.
fn run_sliced(scenario: &mpsim::Scenario, callback: Option<&PyObject>) -> PyResult<mpsim::Report> {
    let mut sim = mpsim::sim::Simulator::new(scenario);
    let end = sim.end();
    let mut last_visit = Instant::now();
    for slice in 1..=SLICES {
        // u128: a duration of days in nanoseconds times the slice count overflows u64.
        let at = SimTime((end.0 as u128 * slice as u128 / SLICES as u128) as u64);
        sim.run_until(at);
        let last = slice == SLICES;
        if last_visit.elapsed() >= PYTHON_INTERVAL || (last && callback.is_some()) {
            before_taking_the_gil();
            Python::with_gil(|py| -> PyResult<()> {
                gil_taken();
                py.check_signals()?;
                if let Some(callback) = callback {
                    let args = (at.as_secs_f64(), end.as_secs_f64(), sim.events_processed());
                    callback.call1(py, args)?;
                    // A callable that runs no Python bytecode (a builtin) checks for none.
                    py.check_signals()?;
                }
                Ok(())
            })?;
            last_visit = Instant::now();
        }
    }
    Ok(sim.run())
}

/// When each copy of each flow entry of a scenario given as JSON text starts, in nanoseconds
/// of simulated time, by entry and copy (`mpsim::sim::copy_starts`).
#[pyfunction]
fn copy_starts(py: Python<'_>, scenario_json: &str) -> PyResult<Vec<Vec<u64>>> {
    let scenario = parse(py, scenario_json)?;
    Ok(mpsim::sim::copy_starts(&scenario)
        .into_iter()
        .map(|starts| starts.into_iter().map(|t| t.0).collect())
        .collect())
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
    m.add_function(wrap_pyfunction!(copy_starts, m)?)?;
    let exiting = wrap_pyfunction!(mark_interpreter_exiting, m)?;
    m.py()
        .import("atexit")?
        .call_method1("register", (exiting,))?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("__version__", mpsim::VERSION)?;
    m.add("FORMAT_VERSION", mpsim::report::FORMAT_VERSION)?;
    Ok(())
}

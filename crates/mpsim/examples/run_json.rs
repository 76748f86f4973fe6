//! Run a scenario JSON file and print the report: `cargo run --release --example run_json FILE`.
fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: run_json SCENARIO.json");
    let text = std::fs::read_to_string(&path).expect("readable scenario file");
    let scenario = mpsim::Scenario::from_json(&text).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2)
    });
    let started = std::time::Instant::now();
    let report = mpsim::sim::run(&scenario);
    let wall = started.elapsed().as_secs_f64();
    println!(
        "{}",
        serde_json::to_string_pretty(&report).expect("serialisable report")
    );
    eprintln!(
        "wall {wall:.3} s, {} events ({:.2} M/s), {} packets ({:.2} M/s)",
        report.events,
        report.events as f64 / wall / 1e6,
        report.packets_delivered,
        report.packets_delivered as f64 / wall / 1e6
    );
}

//! A logger for test processes: what the library logs (`log` crate) goes to stderr, so
//! a test can read a child process's warnings.

use std::io::Write;

/// Writes every record at `Info` or above to stderr as `LEVEL message`.
struct StderrLogger;

impl log::Log for StderrLogger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::Level::Info
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            // Straight to the handle: a test's captured output would hide it from a parent.
            let _ = writeln!(std::io::stderr(), "{} {}", record.level(), record.args());
        }
    }

    fn flush(&self) {}
}

/// Sends the library's log records (`Info` and above) to stderr for the rest of the
/// process; a second call, or a logger set elsewhere first, leaves things as they are.
///
/// ```
/// rucuda_testkit::log_to_stderr();
/// log::warn!("seen on stderr");
/// ```
pub fn log_to_stderr() {
    static LOGGER: StderrLogger = StderrLogger;
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(log::LevelFilter::Info);
    }
}

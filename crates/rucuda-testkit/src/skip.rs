//! The skip marker: how a test says "I could not run here" to the bundle's `run.sh`.

use std::fmt::Display;

/// The text that starts the line a skipped test prints; `run.sh` counts such a test as
/// skipped and records the rest of the line as the reason.
pub const SKIP_MARKER: &str = "RUCUDA_SKIPPED:";

/// Prints `RUCUDA_SKIPPED: reason` on a line of its own (stdout).
///
/// The caller then returns without checking anything; [`skip_test!`](crate::skip_test)
/// does both. Run the test binary with `--nocapture` (as `run.sh` does) to see the line.
///
/// ```
/// rucuda_testkit::skip("this device has no memory pools");
/// ```
pub fn skip(reason: impl Display) {
    let line = format!("{SKIP_MARKER} {reason}");
    // This crate's own tests keep the line instead of printing it: printed, it would make
    // `run.sh` count them as skipped.
    #[cfg(test)]
    tests::PRINTED.with(|printed| printed.borrow_mut().push(line.clone()));
    #[cfg(not(test))]
    {
        // The leading newline matters: with `--test-threads=1` libtest has already
        // printed `test name ... ` on the current line, and the marker must start a line.
        println!("\n{line}");
    }
}

/// What a skipped test returns: `()` for plain tests, `Ok(())` for tests returning a
/// `Result`. Used by [`skip_test!`](crate::skip_test).
pub trait SkipReturn {
    /// The value a skipped test returns.
    fn skipped() -> Self;
}

impl SkipReturn for () {
    fn skipped() -> Self {}
}

impl<E> SkipReturn for Result<(), E> {
    fn skipped() -> Self {
        Ok(())
    }
}

/// Prints the skip marker with a formatted reason and returns from the test.
///
/// Works in tests returning `()` and in tests returning `Result<(), E>`.
///
/// ```
/// use rucuda_testkit::skip_test;
/// fn needs_two_devices(count: usize) -> Result<(), String> {
///     if count < 2 {
///         skip_test!("needs 2 devices, found {count}");
///     }
///     Err("not reached in this example".into())
/// }
/// assert_eq!(needs_two_devices(1), Ok(()));
/// ```
#[macro_export]
macro_rules! skip_test {
    ($($reason:tt)+) => {{
        $crate::skip(::core::format_args!($($reason)+));
        return $crate::SkipReturn::skipped();
    }};
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::RefCell;

    thread_local! {
        /// The lines `skip` would have printed on this thread.
        pub(crate) static PRINTED: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    }

    fn skipping_unit() {
        skip_test!("reason {}", 1);
    }

    fn skipping_result() -> Result<(), String> {
        skip_test!("plain reason");
    }

    #[test]
    fn skip_test_returns_in_both_kinds_of_test() {
        skipping_unit();
        assert_eq!(skipping_result(), Ok(()));
        let printed = PRINTED.with(|p| p.borrow().clone());
        assert_eq!(
            printed,
            ["RUCUDA_SKIPPED: reason 1", "RUCUDA_SKIPPED: plain reason"]
        );
    }
}

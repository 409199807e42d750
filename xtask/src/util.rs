//! Small helpers shared by the xtask commands.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Every xtask command's result.
pub type XResult<T> = Result<T, Box<dyn std::error::Error>>;

/// The workspace root (xtask lives one folder below it).
pub fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Runs a command, failing with its command line when it exits non-zero.
pub fn run(cmd: &mut Command) -> XResult<()> {
    let status = cmd.status()?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("command failed ({status}): {cmd:?}").into())
    }
}

/// Writes a generated file, or with `check` fails when the committed one differs.
pub fn write_or_check(path: &Path, contents: &str, check: bool) -> XResult<()> {
    let old = std::fs::read_to_string(path).unwrap_or_default();
    if old == contents {
        return Ok(());
    }
    if check {
        return Err(format!(
            "{} is stale: run `cargo xtask bindgen` and commit the result",
            path.display()
        )
        .into());
    }
    std::fs::write(path, contents)?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc_timestamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (era arithmetic: 400-year
/// eras of 146097 days, years starting in March so the leap day comes last).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_index + 2) / 5 + 1) as u32;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_415), (2025, 11, 23));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(utc_timestamp().len(), 20);
    }
}

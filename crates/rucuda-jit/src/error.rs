//! The crate's errors: [`Error`] for everything, [`CompileError`] for a compiler that
//! rejected the source.

use std::fmt;
use std::path::PathBuf;

use crate::nvrtc::{MissingFunction, NvrtcLoadError};

/// Everything that can go wrong in this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The compiler rejected the source or its options.
    #[error(transparent)]
    Compile(Box<CompileError>),
    /// NVRTC could not be opened; the message says what to install.
    #[error(transparent)]
    NvrtcNotFound(#[from] NvrtcLoadError),
    /// nvcc could not be found.
    #[error(
        "nvcc was not found (tried: {}). Install the CUDA toolkit (or `pip install \
         nvidia-cuda-nvcc==13.0.*`), put its bin folder on PATH or set CUDA_PATH, or name \
         nvcc with CompileOptions::nvcc; or compile with NVRTC (the default backend)",
        tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    NvccNotFound {
        /// Every path tried.
        tried: Vec<PathBuf>,
    },
    /// The loaded NVRTC lacks a function we need.
    #[error(transparent)]
    MissingFunction(#[from] MissingFunction),
    /// An NVRTC call other than the compilation itself failed.
    #[error("{call} failed: {name}{}", if message.is_empty() { String::new() } else { format!(" ({message})") })]
    Nvrtc {
        /// The function that failed.
        call: &'static str,
        /// The `nvrtcResult` code.
        code: u32,
        /// The code's name, e.g. `NVRTC_ERROR_INVALID_INPUT`.
        name: String,
        /// NVRTC's message for it.
        message: String,
    },
    /// An option we can tell is wrong before running a compiler.
    #[error("invalid compile option {option:?}: {reason}")]
    InvalidOption {
        /// The option as given.
        option: String,
        /// What is wrong and what to do instead.
        reason: String,
    },
    /// Input that cannot be passed to a compiler (a NUL byte in the source, ...).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// A combination this backend cannot do.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// No architecture was given and there is no current device to take it from.
    #[error(
        "no target architecture: set CompileOptions::arch (e.g. Arch::SM_90), or make a \
         CUDA context current so its device's architecture is used"
    )]
    NoArch,
    /// There is no current CUDA context (rucuda's) to compile for and load into.
    #[error(
        "no current CUDA context: make one current (Device::get(0)?.primary_context()?.bind()) \
         or pass one to SourceModule::for_context"
    )]
    NoContext,
    /// A driver call failed (loading a module, linking, looking up a kernel).
    #[error(transparent)]
    Driver(#[from] rucuda_driver::Error),
    /// `cuLinkComplete` or `cuLinkAddData` failed; the linker's error log says why.
    #[error("linking failed: {source}{}", if log.is_empty() { String::new() } else { format!("\n--- linker log ---\n{}", log.trim_end()) })]
    Link {
        /// The failing driver call.
        source: rucuda_driver::Error,
        /// The linker's error log.
        log: String,
    },
    /// A library or tool the operation needs was not found.
    #[error("{what} was not found (tried: {}). {hint}", tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    NotFound {
        /// What was looked for, e.g. `libcudadevrt.a`.
        what: String,
        /// Every path tried.
        tried: Vec<PathBuf>,
        /// What to install or set.
        hint: String,
    },
    /// A file or process operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What we were doing.
        context: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

impl From<CompileError> for Error {
    fn from(e: CompileError) -> Error {
        Error::Compile(Box::new(e))
    }
}

impl Error {
    /// The [`CompileError`], when the compiler rejected the source.
    ///
    /// ```no_run
    /// use rucuda_jit::{compile, Arch, CompileOptions};
    /// let err = compile("__global__ void k() { oops; }", &CompileOptions::new().arch(Arch::SM_90))
    ///     .unwrap_err();
    /// let ce = err.as_compile_error().expect("a compile error");
    /// assert!(ce.log.contains("error"));
    /// ```
    pub fn as_compile_error(&self) -> Option<&CompileError> {
        match self {
            Error::Compile(e) => Some(e),
            _ => None,
        }
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    /// A fatbin asked of NVRTC, which cannot make one.
    pub(crate) fn nvrtc_fatbin() -> Error {
        Error::Unsupported(
            "NVRTC cannot produce a fatbin: use Backend::Nvcc, or a cubin or PTX".into(),
        )
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A compiler rejected the source or its options: everything it said, and where.
///
/// Its message shows the compiler, the status, the options or command line, the log
/// (with the compiler's own `kernel.cu(3): error: ...` lines), stdout and stderr when
/// not empty, and the source lines around the first error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", render(self))]
pub struct CompileError {
    /// The compiler: `NVRTC 13.0` or the path of nvcc.
    pub compiler: String,
    /// What failed: an NVRTC result name (`NVRTC_ERROR_COMPILATION`) or nvcc's exit status.
    pub status: String,
    /// The NVRTC options, or nvcc's whole command line.
    pub command: Vec<String>,
    /// The compiler's log (NVRTC's program log; for nvcc, its stderr and stdout).
    pub log: String,
    /// nvcc's standard output (empty for NVRTC).
    pub stdout: String,
    /// nvcc's standard error (empty for NVRTC).
    pub stderr: String,
    /// The first line of the log that reports an error, if one does.
    pub first_error: Option<String>,
    /// The line number of the first error in the source, when it is in the source.
    pub line: Option<u32>,
    /// The source lines around the first error, numbered, the error's line marked `>`.
    pub excerpt: Option<String>,
    /// What rucuda adds: which compiler was tried first and why another ran, or why it
    /// did not (NVRTC could not open a host header and nvcc was not found). Shown last.
    pub notes: Vec<String>,
}

impl CompileError {
    /// Builds the error, finding the first error in `log` and the source lines around
    /// it. `program_name` is the source's file name as the compiler reports it.
    ///
    /// ```
    /// use rucuda_jit::CompileError;
    /// let source = "__global__ void k(float *x)\n{\n  x[0] = y;\n}\n";
    /// let log = "kernel.cu(3): error: identifier \"y\" is undefined\n1 error detected";
    /// let e = CompileError::new("NVRTC 13.0", "NVRTC_ERROR_COMPILATION", vec![], log, "", "",
    ///                           source, "kernel.cu");
    /// assert_eq!(e.line, Some(3));
    /// assert!(e.excerpt.unwrap().contains(">    3 |   x[0] = y;"));
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        compiler: impl Into<String>,
        status: impl Into<String>,
        command: Vec<String>,
        log: impl Into<String>,
        stdout: impl Into<String>,
        stderr: impl Into<String>,
        source: &str,
        program_name: &str,
    ) -> CompileError {
        let log = log.into();
        let stdout = stdout.into();
        let stderr = stderr.into();
        let first = [log.as_str(), stderr.as_str(), stdout.as_str()]
            .iter()
            .find_map(|text| find_first_error(text));
        let (first_error, line) = match first {
            Some((text, location)) => {
                let line = location
                    .filter(|(file, _)| same_file(file, program_name))
                    .map(|(_, line)| line);
                (Some(text), line)
            }
            None => (None, None),
        };
        let excerpt = line.and_then(|l| excerpt(source, l, 2));
        CompileError {
            compiler: compiler.into(),
            status: status.into(),
            command,
            log,
            stdout,
            stderr,
            first_error,
            line,
            excerpt,
            notes: Vec::new(),
        }
    }

    /// Adds a [note](Self::notes).
    pub(crate) fn with_note(mut self, note: impl Into<String>) -> CompileError {
        self.notes.push(note.into());
        self
    }
}

fn same_file(reported: &str, program_name: &str) -> bool {
    let base = |p: &str| p.rsplit(['/', '\\']).next().unwrap_or(p).to_string();
    base(reported) == base(program_name)
}

/// The first line reporting an error (`file(12): error: ...`, `file:12:3: error: ...`,
/// `... fatal ...`), and the file and line it names.
pub(crate) fn find_first_error(text: &str) -> Option<(String, Option<(String, u32)>)> {
    let line = text.lines().find(|l| {
        let l = l.to_ascii_lowercase();
        l.contains("error") || l.contains("fatal")
    })?;
    Some((line.trim().to_string(), location(line)))
}

/// Parses `file(12): ...` (EDG, NVRTC and nvcc) or `file:12:3: ...` (gcc, ptxas).
fn location(line: &str) -> Option<(String, u32)> {
    if let Some(open) = line.find("): ") {
        let head = &line[..open];
        if let Some(paren) = head.rfind('(') {
            let number = &head[paren + 1..];
            if let Ok(n) = number.parse::<u32>() {
                return Some((head[..paren].trim().to_string(), n));
            }
        }
    }
    let mut parts = line.splitn(4, ':');
    let file = parts.next()?;
    let number = parts.next()?.trim().parse::<u32>().ok()?;
    Some((file.trim().to_string(), number))
}

/// Lines `line - context ..= line + context` of `source`, numbered, `line` marked.
fn excerpt(source: &str, line: u32, context: u32) -> Option<String> {
    let line = usize::try_from(line).ok()?;
    let context = usize::try_from(context).ok()?;
    let lines: Vec<&str> = source.lines().collect();
    if line == 0 || line > lines.len() {
        return None;
    }
    let first = line.saturating_sub(context).max(1);
    let last = (line + context).min(lines.len());
    let mut out = String::new();
    for n in first..=last {
        let mark = if n == line { '>' } else { ' ' };
        out.push_str(&format!("{mark}{n:>5} | {}\n", lines[n - 1]));
    }
    Some(out)
}

/// The message: compiler and status, command, first error, log, stdout and stderr when
/// they add anything, and the source lines around the first error.
fn render(e: &CompileError) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = write_message(e, &mut out);
    out
}

fn write_message(e: &CompileError, f: &mut impl fmt::Write) -> fmt::Result {
    writeln!(f, "{} failed to compile ({})", e.compiler, e.status)?;
    writeln!(f, "command: {}", e.command.join(" "))?;
    if let Some(first) = &e.first_error {
        writeln!(f, "first error: {first}")?;
    }
    if !e.log.is_empty() {
        writeln!(f, "--- log ---\n{}", e.log.trim_end())?;
    }
    if !e.stdout.is_empty() && !e.log.contains(e.stdout.trim()) {
        writeln!(f, "--- stdout ---\n{}", e.stdout.trim_end())?;
    }
    if !e.stderr.is_empty() && !e.log.contains(e.stderr.trim()) {
        writeln!(f, "--- stderr ---\n{}", e.stderr.trim_end())?;
    }
    if let (Some(line), Some(ex)) = (e.line, &e.excerpt) {
        writeln!(f, "--- source around line {line} ---\n{}", ex.trim_end())?;
    }
    for note in &e.notes {
        writeln!(f, "note: {note}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "line one\nline two\nline three\nline four\nline five\nline six\n";

    #[test]
    fn nvrtc_style_location() {
        let log = "kernel.cu(4): error: expected a \";\"\n\n1 error detected in the compilation of \"kernel.cu\".";
        let e = CompileError::new(
            "NVRTC 13.0",
            "NVRTC_ERROR_COMPILATION",
            vec![],
            log,
            "",
            "",
            SOURCE,
            "kernel.cu",
        );
        assert_eq!(e.line, Some(4));
        assert_eq!(
            e.first_error.as_deref(),
            Some("kernel.cu(4): error: expected a \";\"")
        );
        let ex = e.excerpt.clone().unwrap();
        assert_eq!(
            ex,
            "     2 | line two\n     3 | line three\n>    4 | line four\n     5 | line five\n     6 | line six\n"
        );
        let shown = e.to_string();
        assert!(shown.contains("kernel.cu(4): error"), "{shown}");
        assert!(shown.contains(">    4 | line four"), "{shown}");
    }

    #[test]
    fn nvcc_style_with_a_path() {
        let stderr = "/tmp/rucuda-jit-1/kernel.cu(1): error: identifier \"x\" is undefined\n";
        let e = CompileError::new(
            "nvcc",
            "exit status: 2",
            vec!["nvcc".into()],
            stderr,
            "",
            stderr,
            SOURCE,
            "kernel.cu",
        );
        assert_eq!(e.line, Some(1));
        assert!(e
            .excerpt
            .as_deref()
            .unwrap()
            .starts_with(">    1 | line one"));
        // stderr equal to the log is shown once.
        assert_eq!(e.to_string().matches("identifier").count(), 2);
    }

    #[test]
    fn gcc_style_location_and_headers() {
        let log = "inc.h:2:5: error: unknown type name\n";
        let e = CompileError::new(
            "nvcc",
            "exit status: 1",
            vec![],
            log,
            "",
            "",
            SOURCE,
            "kernel.cu",
        );
        assert_eq!(
            e.first_error.as_deref(),
            Some("inc.h:2:5: error: unknown type name")
        );
        // The error is in a header, not the source: no source excerpt.
        assert_eq!(e.line, None);
        assert_eq!(e.excerpt, None);
    }

    #[test]
    fn option_errors_have_no_location() {
        let log = "nvrtc: error: unrecognized option --bogus";
        let e = CompileError::new(
            "NVRTC 13.0",
            "NVRTC_ERROR_INVALID_OPTION",
            vec!["--bogus".into()],
            log,
            "",
            "",
            SOURCE,
            "kernel.cu",
        );
        assert_eq!(e.first_error.as_deref(), Some(log));
        assert_eq!(e.line, None);
        assert!(e.to_string().contains("command: --bogus"));
    }

    #[test]
    fn excerpt_clamps_at_the_edges() {
        assert_eq!(excerpt("a\nb", 1, 2).unwrap(), ">    1 | a\n     2 | b\n");
        assert_eq!(excerpt("a\nb", 3, 2), None);
        assert_eq!(excerpt("a\nb", 0, 2), None);
    }
}

//! The wait behind programmatic dependent launches of generated kernels: a kernel may be
//! launched so that it starts before its stream's previous kernel has finished only if
//! its first statement waits for that kernel (`griddepcontrol.wait`). Templates whose
//! kernels are launched that way (elementwise, reduction) begin each kernel with
//! [`WAIT_FOR_PREDECESSOR`] (their `$WAIT_FOR_PREDECESSOR$` slot); their tests run every
//! rendered variant through `every_kernel_waits_first`.

/// The lines each such kernel begins with (`cuda/grid_dependency_wait.cuh`).
pub(crate) const WAIT_FOR_PREDECESSOR: &str = include_str!("cuda/grid_dependency_wait.cuh");

/// The statement of [`WAIT_FOR_PREDECESSOR`] that must come first.
#[cfg(test)]
pub(crate) const WAIT_STATEMENT: &str = "asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");";

/// Checks that the body of every `__global__` function in `source` begins with
/// [`WAIT_STATEMENT`] (comments and preprocessor lines aside); the error names the first
/// kernel that does not.
#[cfg(test)]
pub(crate) fn every_kernel_waits_first(source: &str) -> Result<usize, String> {
    let mut kernels = 0;
    let mut rest = source;
    while let Some(at) = rest.find("__global__") {
        let after = &rest[at..];
        let open = after
            .find('{')
            .ok_or_else(|| format!("a kernel without a body: {}", first_line(after)))?;
        let first = after[open + 1..]
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with("//") && !l.starts_with('#'));
        if first != Some(WAIT_STATEMENT) {
            return Err(format!(
                "kernel `{}` begins with {:?}",
                first_line(after),
                first.unwrap_or("nothing")
            ));
        }
        kernels += 1;
        rest = &after[open..];
    }
    Ok(kernels)
}

#[cfg(test)]
fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_comes_first_in_its_lines() {
        assert!(WAIT_FOR_PREDECESSOR.contains(WAIT_STATEMENT));
        let k = format!("__global__ void k()\n{{\n{WAIT_FOR_PREDECESSOR}}}\n");
        assert_eq!(every_kernel_waits_first(&k), Ok(1));
    }

    #[test]
    fn a_kernel_without_the_wait_is_named() {
        let good = format!("__global__ void a(int *x)\n{{\n  // c\n#if 1\n  {WAIT_STATEMENT}\n#endif\n  x[0] = 1;\n}}\n");
        assert_eq!(every_kernel_waits_first(&good), Ok(1));
        let bad = format!("{good}extern \"C\" __global__ void b(int *x)\n{{\n  x[0] = 2;\n  {WAIT_STATEMENT}\n}}\n");
        let e = every_kernel_waits_first(&bad).unwrap_err();
        assert!(
            e.contains("void b(int *x)") && e.contains("x[0] = 2;"),
            "{e}"
        );
    }
}

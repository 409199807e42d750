//! `cargo xtask bindgen [--check]`: regenerates the committed raw bindings.
//!
//! One bindgen parse per library gives the types (`bindings.rs`), the run-time function
//! table (`functions.rs`) and its getters (`getters.rs`), so they cannot drift. Function
//! declarations are turned into `PFN_<name>` pointer types in `bindings.rs`;
//! `functions.rs` holds one `Option<PFN_...>` field per function and needs only the
//! bindings; `getters.rs` gives the loader's type (`Driver`, `Nvrtc`, `Nccl`, in the
//! `loader` module beside them) one getter per function that turns absence into a typed
//! error. The loader uses the table and the getters use the loader, never the other way
//! round.
//!
//! The driver and NVRTC come from the CUDA headers (`CUDA_PATH`, NVIDIA's pip wheels);
//! NCCL's `nccl.h` from `RUCUDA_NCCL_INCLUDE`, `CUDA_PATH`'s include folder, or the
//! `nvidia/nccl/include` folder of the `nvidia-nccl-cu13` wheel (a shim stands in for the
//! CUDA runtime headers it includes: it only needs `cudaStream_t`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use quote::ToTokens;

use crate::util::{project_root, run, write_or_check, XResult};

/// One library to bind.
struct Target {
    /// Headers included by the generated wrapper, in order.
    headers: &'static [&'static str],
    /// Source folder (relative to the project root) that receives the output.
    out_dir: &'static str,
    /// Regex allow-lists.
    functions: &'static str,
    types: &'static str,
    vars: &'static str,
    /// The Rust type holding the loaded library (`Driver`, `Nvrtc`).
    loader_type: &'static str,
    /// The struct name of the function table.
    table_type: &'static str,
    /// Header whose `#define name name_vN` lines give unversioned aliases.
    alias_header: Option<&'static str>,
    /// Which header set the target is generated from.
    from: HeaderSet,
}

/// The header sets the targets come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HeaderSet {
    /// The CUDA toolkit's (`cuda.h`, `nvrtc.h`); the version is `CUDA_VERSION`.
    Cuda,
    /// NCCL's `nccl.h`; the version is `NCCL_MAJOR.NCCL_MINOR.NCCL_PATCH`.
    Nccl,
}

/// The NCCL wheel fetched for `nccl.h` when no header is found locally.
const NCCL_WHEEL: &str = "nvidia-nccl-cu13==2.28.9";

/// Environment variable naming a folder that holds `nccl.h`.
pub const NCCL_INCLUDE_ENV: &str = "RUCUDA_NCCL_INCLUDE";
/// The folder holding `cuda.h` and `nvrtc.h`, ahead of `CUDA_PATH` (`cargo xtask test`
/// sets it to the wheels it installed under `target/`).
pub const CUDA_INCLUDE_ENV: &str = "RUCUDA_CUDA_INCLUDE";

const TARGETS: &[Target] = &[
    Target {
        headers: &["cuda.h", "cudaGL.h"],
        out_dir: "crates/rucuda-driver-sys/src",
        functions: "cu.*",
        types: "(CU|cu).*",
        vars: "(CU|CUDA|cu).*",
        loader_type: "Driver",
        table_type: "DriverFunctions",
        alias_header: Some("cuda.h"),
        from: HeaderSet::Cuda,
    },
    Target {
        headers: &["nvrtc.h"],
        out_dir: "crates/rucuda-jit/src/nvrtc",
        functions: "nvrtc.*",
        types: "nvrtc.*",
        vars: "NVRTC.*",
        loader_type: "Nvrtc",
        table_type: "NvrtcFunctions",
        alias_header: None,
        from: HeaderSet::Cuda,
    },
    Target {
        headers: &["nccl.h"],
        out_dir: "crates/rucuda-nccl/src/sys",
        functions: "nccl.*",
        types: "nccl.*",
        vars: "NCCL.*",
        loader_type: "Nccl",
        table_type: "NcclFunctions",
        alias_header: None,
        from: HeaderSet::Nccl,
    },
];

/// Entry point.
pub fn main(args: &[String]) -> XResult<()> {
    let check = args.iter().any(|a| a == "--check");
    let include = find_cuda_include()?;
    eprintln!("xtask bindgen: headers from {}", include.display());
    let version = cuda_version(&include.join("cuda.h"))?;
    let mut nccl: Option<(PathBuf, String)> = None;
    for target in TARGETS {
        match target.from {
            HeaderSet::Cuda => {
                let how = format!("the CUDA {} headers", version_text(&version));
                generate(target, std::slice::from_ref(&include), &how, check)?;
            }
            HeaderSet::Nccl => {
                if nccl.is_none() {
                    let found = match find_nccl_include() {
                        Some(dir) => Some(dir),
                        // Checking never downloads: say what is missing and go on.
                        None if check => {
                            eprintln!(
                                "xtask bindgen: no nccl.h (set {NCCL_INCLUDE_ENV} or \
                                 `pip install {NCCL_WHEEL}`); {} not checked",
                                target.out_dir
                            );
                            None
                        }
                        None => Some(fetch_nccl_include()?),
                    };
                    if let Some(dir) = found {
                        eprintln!("xtask bindgen: nccl.h from {}", dir.display());
                        let v = nccl_version(&dir.join("nccl.h"))?;
                        nccl = Some((dir, v));
                    }
                }
                if let Some((dir, v)) = &nccl {
                    let how = format!("the NCCL {v} headers");
                    generate(target, &[dir.clone(), nccl_shim()?], &how, check)?;
                }
            }
        }
    }
    Ok(())
}

/// `13000` as `13.0`.
fn version_text(version: &str) -> String {
    let v: u32 = version.parse().unwrap_or(0);
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

/// The folder holding `nccl.h`: `RUCUDA_NCCL_INCLUDE`, `CUDA_PATH`/`CUDA_HOME`'s
/// `include`, the NCCL wheel's `nvidia/nccl/include` in python3's site-packages, or an
/// earlier download under `target/cuda-headers`.
pub fn find_nccl_include() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(dir) = std::env::var_os(NCCL_INCLUDE_ENV).filter(|v| !v.is_empty()) {
        dirs.push(PathBuf::from(dir));
    }
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(root) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            dirs.push(PathBuf::from(root).join("include"));
        }
    }
    dirs.extend(
        site_packages()
            .into_iter()
            .map(|s| s.join("nvidia/nccl/include")),
    );
    dirs.push(project_root().join("target/cuda-headers/nvidia/nccl/include"));
    dirs.into_iter().find(|d| d.join("nccl.h").is_file())
}

/// `nccl.h` includes `cuda_runtime.h`, `cuda_fp16.h` and `cuda_bf16.h` for one type,
/// `cudaStream_t`. The full runtime headers need the compiler's `crt/` folder, which
/// NVIDIA's runtime wheel lacks; a shim declaring that type keeps the NCCL bindings
/// independent of which CUDA headers are around.
fn nccl_shim() -> XResult<PathBuf> {
    let shim = project_root().join("target/xtask-nccl-shim");
    std::fs::create_dir_all(&shim)?;
    std::fs::write(
        shim.join("cuda_runtime.h"),
        "#include <stddef.h>\n#define CUDART_VERSION 13000\ntypedef struct CUstream_st *cudaStream_t;\n",
    )?;
    std::fs::write(shim.join("cuda_fp16.h"), "")?;
    std::fs::write(shim.join("cuda_bf16.h"), "")?;
    Ok(shim)
}

/// Downloads NVIDIA's NCCL wheel into `target/cuda-headers` and unpacks its headers.
fn fetch_nccl_include() -> XResult<PathBuf> {
    let dir = project_root().join("target/cuda-headers");
    std::fs::create_dir_all(&dir)?;
    eprintln!("xtask bindgen: no nccl.h; fetching {NCCL_WHEEL} from PyPI for the header");
    run(Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "--platform",
            "manylinux_2_18_x86_64",
            "--platform",
            "manylinux2014_x86_64",
            "-d",
        ])
        .arg(&dir)
        .arg(NCCL_WHEEL))?;
    unpack_headers(&dir)?;
    let inc = dir.join("nvidia/nccl/include");
    if inc.join("nccl.h").is_file() {
        Ok(inc)
    } else {
        Err(format!(
            "the downloaded wheel holds no nccl.h under {}",
            inc.display()
        )
        .into())
    }
}

/// Extracts the `include/` members of every wheel in `dir` into `dir`.
fn unpack_headers(dir: &Path) -> XResult<()> {
    let script = "import sys, zipfile, glob\n\
        d = sys.argv[1]\n\
        for w in glob.glob(d + '/*.whl'):\n\
        \x20   z = zipfile.ZipFile(w)\n\
        \x20   z.extractall(d, [n for n in z.namelist() if '/include/' in n])\n";
    run(Command::new("python3").args(["-c", script]).arg(dir))
}

/// `NCCL_MAJOR.NCCL_MINOR.NCCL_PATCH` of a `nccl.h`.
fn nccl_version(nccl_h: &Path) -> XResult<String> {
    let text = std::fs::read_to_string(nccl_h)?;
    let define = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("#define {name} ")))
            .map(|v| v.trim().to_string())
            .ok_or_else(|| format!("{} has no {name}", nccl_h.display()))
    };
    Ok(format!(
        "{}.{}.{}",
        define("NCCL_MAJOR")?,
        define("NCCL_MINOR")?,
        define("NCCL_PATCH")?
    ))
}

/// The folder holding `cuda.h` and `nvrtc.h` without downloading anything:
/// `RUCUDA_CUDA_INCLUDE`, `CUDA_PATH`/`CUDA_HOME`'s `include`, python3's site-packages.
fn local_cuda_include() -> Option<PathBuf> {
    let has_both = |inc: &Path| inc.join("cuda.h").exists() && inc.join("nvrtc.h").exists();
    if let Some(dir) = std::env::var_os(CUDA_INCLUDE_ENV).filter(|v| !v.is_empty()) {
        let inc = PathBuf::from(dir);
        if has_both(&inc) {
            return Some(inc);
        }
    }
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(root) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            let inc = PathBuf::from(root).join("include");
            if has_both(&inc) {
                return Some(inc);
            }
        }
    }
    find_in_site_packages()
}

/// The folder holding `cuda.h` and `nvrtc.h`: `RUCUDA_CUDA_INCLUDE`,
/// `CUDA_PATH`/`CUDA_HOME`, NVIDIA's pip wheels installed for python3, else those wheels
/// downloaded into `target/cuda-headers` (they hold the headers).
pub fn find_cuda_include() -> XResult<PathBuf> {
    if let Some(inc) = local_cuda_include() {
        return Ok(inc);
    }
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Ok(root) = std::env::var(var) {
            let inc = PathBuf::from(root).join("include");
            if inc.join("cuda.h").exists() && inc.join("nvrtc.h").exists() {
                return Ok(inc);
            }
        }
    }
    if let Some(inc) = find_in_site_packages() {
        return Ok(inc);
    }
    let dir = project_root().join("target/cuda-headers");
    let inc = dir.join("nvidia/cu13/include");
    if inc.join("cuda.h").exists() && inc.join("nvrtc.h").exists() {
        return Ok(inc);
    }
    std::fs::create_dir_all(&dir)?;
    eprintln!(
        "xtask bindgen: no CUDA_PATH; fetching NVIDIA's 13.0 wheels from PyPI for the headers"
    );
    run(Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "--platform",
            "manylinux_2_17_x86_64",
            "--platform",
            "manylinux2014_x86_64",
            "--platform",
            "manylinux_2_12_x86_64",
            "--platform",
            "manylinux2010_x86_64",
            "-d",
        ])
        .arg(&dir)
        .args(["nvidia-cuda-runtime==13.0.*", "nvidia-cuda-nvrtc==13.0.*"]))?;
    unpack_headers(&dir)?;
    if inc.join("cuda.h").exists() {
        Ok(inc)
    } else {
        Err(format!(
            "the downloaded wheels hold no cuda.h under {}",
            inc.display()
        )
        .into())
    }
}

/// NVIDIA's pip wheels (`nvidia-cuda-runtime`, `nvidia-cuda-nvrtc`) installed for python3
/// put both headers in `site-packages/nvidia/cu13/include`.
fn find_in_site_packages() -> Option<PathBuf> {
    site_packages()
        .into_iter()
        .map(|s| s.join("nvidia/cu13/include"))
        .find(|inc| inc.join("cuda.h").exists() && inc.join("nvrtc.h").exists())
}

/// python3's site-packages folders (empty without python3).
fn site_packages() -> Vec<PathBuf> {
    let Ok(out) = Command::new("python3")
        .args([
            "-c",
            "import site; print('\\n'.join(site.getsitepackages()))",
        ])
        .output()
    else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| PathBuf::from(l.trim()))
        .collect()
}

fn cuda_version(cuda_h: &Path) -> XResult<String> {
    let text = std::fs::read_to_string(cuda_h)?;
    text.lines()
        .find_map(|l| l.strip_prefix("#define CUDA_VERSION "))
        .map(|v| v.trim().to_string())
        .ok_or_else(|| "cuda.h has no CUDA_VERSION".into())
}

/// Generates one target from the headers in `includes` (searched in order); `how` names
/// the header set and version in the generated files' first line.
fn generate(t: &Target, includes: &[PathBuf], how: &str, check: bool) -> XResult<()> {
    // cudaGL.h includes <GL/gl.h> for two typedefs; a shim keeps GL headers off the list of needs.
    let shim = project_root().join("target/xtask-gl-shim");
    std::fs::create_dir_all(shim.join("GL"))?;
    std::fs::write(
        shim.join("GL/gl.h"),
        "typedef unsigned int GLuint;\ntypedef unsigned int GLenum;\n",
    )?;
    let wrapper: String = t
        .headers
        .iter()
        .map(|h| format!("#include <{h}>\n"))
        .collect();
    let mut builder = bindgen::Builder::default().header_contents("rucuda_wrapper.h", &wrapper);
    for include in includes {
        builder = builder.clang_arg(format!("-I{}", include.display()));
    }
    let bindings = builder
        .clang_arg(format!("-I{}", shim.display()))
        .allowlist_function(t.functions)
        .allowlist_type(t.types)
        .allowlist_var(t.vars)
        // Enums the driver returns are newtypes, never Rust enums: a newer driver's
        // unknown value must not be undefined behaviour.
        .default_enum_style(bindgen::EnumVariation::NewType {
            is_bitfield: false,
            is_global: false,
        })
        .bitfield_enum(".*[Ff]lags.*")
        .derive_default(true)
        .derive_eq(true)
        .derive_hash(true)
        .layout_tests(false)
        .generate_comments(false)
        .prepend_enum_name(false)
        .size_t_is_usize(true)
        .generate()
        .map_err(|e| format!("bindgen failed: {e}"))?;
    let raw = bindings.to_string();
    let file = syn::parse_file(&raw)?;

    let mut items = Vec::new();
    let mut functions: Vec<(String, String)> = Vec::new(); // (name, PFN type tokens)
    for item in file.items {
        match item {
            syn::Item::ForeignMod(m) => {
                for fi in m.items {
                    if let syn::ForeignItem::Fn(f) = fi {
                        let name = f.sig.ident.to_string();
                        let inputs = f.sig.inputs.to_token_stream().to_string();
                        let output = f.sig.output.to_token_stream().to_string();
                        functions
                            .push((name, format!("unsafe extern \"C\" fn({inputs}) {output}")));
                    }
                }
            }
            other => items.push(other.to_token_stream().to_string()),
        }
    }
    functions.sort();
    functions.dedup_by(|a, b| a.0 == b.0);

    let how = format!(
        "// Generated by `cargo xtask bindgen` from {how} ({}) with bindgen; do not edit by hand.\n",
        t.headers.join(", ")
    );
    let mut out = how.clone();
    out.push_str("#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals, dead_code, missing_docs, unpredictable_function_pointer_comparisons)]\n#![allow(clippy::all, clippy::undocumented_unsafe_blocks)]\n");
    for it in &items {
        out.push_str(it);
        out.push('\n');
    }
    for (name, ty) in &functions {
        writeln!(out, "/// Pointer type of the C function `{name}`.")?;
        writeln!(out, "pub type PFN_{name} = {ty};")?;
    }

    let aliases = match t.alias_header {
        Some(h) => read_aliases(&includes[0].join(h), &functions)?,
        None => BTreeMap::new(),
    };
    let table = function_table(t, &how, &functions);
    let getters = getters(t, &how, &functions, &aliases);

    let src = project_root().join(t.out_dir);
    write_or_check(&src.join("bindings.rs"), &rustfmt(&out)?, check)?;
    write_or_check(&src.join("functions.rs"), &rustfmt(&table)?, check)?;
    write_or_check(&src.join("getters.rs"), &rustfmt(&getters)?, check)?;
    eprintln!(
        "xtask bindgen: {} functions, {} aliases -> {}",
        functions.len(),
        aliases.len(),
        src.display()
    );
    Ok(())
}

/// `#define cuMemAlloc cuMemAlloc_v2` (and the `__CUDA_API_PTSZ(...)` form): the
/// unversioned names C code uses, mapped to the ABI names bound.
fn read_aliases(
    header: &Path,
    functions: &[(String, String)],
) -> XResult<BTreeMap<String, String>> {
    let text = std::fs::read_to_string(header)?;
    let known: std::collections::BTreeSet<&str> = functions.iter().map(|f| f.0.as_str()).collect();
    let mut map = BTreeMap::new();
    for line in text.lines() {
        let l = line.trim_start();
        let Some(rest) = l.strip_prefix("#define ") else {
            continue;
        };
        let mut parts = rest.split_whitespace();
        let (Some(alias), Some(target)) = (parts.next(), parts.next()) else {
            continue;
        };
        if !alias.starts_with("cu") {
            continue;
        }
        let target = target
            .trim_start_matches("__CUDA_API_PTSZ(")
            .trim_start_matches("__CUDA_API_PTDS(")
            .trim_end_matches(')');
        if alias != target && known.contains(target) && !known.contains(alias) {
            map.entry(alias.to_string())
                .or_insert_with(|| target.to_string());
        }
    }
    Ok(map)
}

/// `functions.rs`: the table of optional function pointers, their names, and the
/// resolver; it uses the bindings alone.
fn function_table(t: &Target, how: &str, functions: &[(String, String)]) -> String {
    let table = t.table_type;
    let mut s = String::from(how);
    s.push_str("//! The run-time function table: one optional entry per bound C function.\n");
    s.push_str("#![allow(non_snake_case, clippy::missing_safety_doc)]\n");
    s.push_str("use super::bindings::*;\n\n");
    writeln!(s, "/// Every function of the bound headers, resolved by its ABI name when the library was opened;").ok();
    writeln!(s, "/// `None` where this library version lacks it.").ok();
    writeln!(s, "#[derive(Clone, Copy)]\npub struct {table} {{").ok();
    for (name, _) in functions {
        writeln!(
            s,
            "    /// `{name}`, if the loaded library has it.\n    pub {name}: Option<PFN_{name}>,"
        )
        .ok();
    }
    s.push_str("}\n\n");
    writeln!(
        s,
        "/// The C names of every function in [`{table}`], in the table's order."
    )
    .ok();
    s.push_str("pub const FUNCTION_NAMES: &[&str] = &[\n");
    for (name, _) in functions {
        writeln!(s, "    \"{name}\",").ok();
    }
    s.push_str("];\n\n");
    writeln!(s, "impl {table} {{").ok();
    s.push_str(
        "    /// Resolves every entry through `lookup` (which takes a NUL-terminated name).\n",
    );
    s.push_str("    pub(crate) fn resolve(lookup: &mut dyn FnMut(&[u8]) -> Option<*mut std::ffi::c_void>) -> Self {\n        Self {\n");
    for (name, _) in functions {
        writeln!(
            s,
            "            // SAFETY: the symbol named `{name}` has the C signature `PFN_{name}` was generated from.\n            {name}: lookup(b\"{name}\\0\").map(|p| unsafe {{ std::mem::transmute::<*mut std::ffi::c_void, PFN_{name}>(p) }}),"
        )
        .ok();
    }
    s.push_str("        }\n    }\n}\n");
    s
}

/// `getters.rs`: one getter per function (and per unversioned alias) on the loader's
/// type, returning the pointer or an error naming the function.
fn getters(
    t: &Target,
    how: &str,
    functions: &[(String, String)],
    aliases: &BTreeMap<String, String>,
) -> String {
    let loader = t.loader_type;
    let mut s = String::from(how);
    writeln!(
        s,
        "//! The getters of [`{loader}`]: one per bound C function, returning its pointer or an\n//! error naming it."
    )
    .ok();
    s.push_str("#![allow(non_snake_case)]\n");
    writeln!(
        s,
        "use super::bindings::*;\nuse super::loader::{{{loader}, MissingFunction}};\n"
    )
    .ok();
    writeln!(s, "impl {loader} {{").ok();
    for (name, _) in functions {
        writeln!(
            s,
            "    /// `{name}`, or an error naming it and the library's version."
        )
        .ok();
        writeln!(
            s,
            "    #[inline]\n    pub fn {name}(&self) -> Result<PFN_{name}, MissingFunction> {{\n        self.functions.{name}.ok_or_else(|| self.missing(\"{name}\"))\n    }}"
        )
        .ok();
    }
    for (alias, target) in aliases {
        writeln!(s, "    /// `{alias}`: the header's name for `{target}`.").ok();
        writeln!(
            s,
            "    #[inline]\n    pub fn {alias}(&self) -> Result<PFN_{target}, MissingFunction> {{\n        self.{target}()\n    }}"
        )
        .ok();
    }
    s.push_str("}\n");
    s
}

fn rustfmt(src: &str) -> XResult<String> {
    use std::io::Write;
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2021", "--emit", "stdout", "--quiet"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()?;
    child
        .stdin
        .take()
        .ok_or("rustfmt has no stdin")?
        .write_all(src.as_bytes())?;
    let out = child.wait_with_output()?;
    if !out.status.success() {
        return Err("rustfmt failed on generated code".into());
    }
    Ok(String::from_utf8(out.stdout)?)
}

#[cfg(test)]
mod tests {
    /// The committed bindings must be what the generator makes from the CUDA 13.0 headers.
    /// Runs where the headers (`cargo xtask test` installs NVIDIA's wheels under `target/`
    /// and names them in `RUCUDA_CUDA_INCLUDE`; or CUDA_PATH) and libclang are present.
    /// Elsewhere it skips, saying why in one line.
    #[test]
    fn committed_bindings_are_fresh() {
        if super::local_cuda_include().is_none() {
            say_skipped(
                "no CUDA headers here (`cargo xtask test` installs NVIDIA's wheels that hold them)",
            );
            return;
        }
        if clang_sys_missing() {
            say_skipped(
                "libclang not found (bindgen needs it; set LIBCLANG_PATH or install \
                 libclang-dev to check the bindings)",
            );
            return;
        }
        if let Err(e) = super::main(&["--check".to_string()]) {
            panic!("{e}");
        }
    }

    /// One `RUCUDA_SKIPPED:` line, straight to stdout so that `cargo test` shows it.
    fn say_skipped(reason: &str) {
        use std::io::Write;
        let _ = writeln!(std::io::stdout().lock(), "\nRUCUDA_SKIPPED: {reason}");
    }

    fn clang_sys_missing() -> bool {
        ![
            "/usr/lib/llvm-14/lib",
            "/usr/lib/llvm-15/lib",
            "/usr/lib/llvm-16/lib",
            "/usr/lib/x86_64-linux-gnu",
        ]
        .iter()
        .any(|d| {
            std::fs::read_dir(d)
                .map(|it| {
                    // libclang.so or libclang-14.so.1, not libclang-cpp (another library).
                    it.flatten().any(|e| {
                        let name = e.file_name().to_string_lossy().into_owned();
                        name.starts_with("libclang.so")
                            || name
                                .strip_prefix("libclang-")
                                .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
                    })
                })
                .unwrap_or(false)
        }) && std::env::var_os("LIBCLANG_PATH").is_none()
    }
}

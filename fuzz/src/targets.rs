//! The fuzz targets: each takes arbitrary bytes, feeds them to one parser of user input
//! and checks what came back. A panic (a failed check, or a panic inside the library) is
//! a finding; returning is a pass. Both drivers call these: libFuzzer (`cargo fuzz`,
//! `fuzz_targets/`) and the stable mutation driver (`src/bin/stable_fuzz.rs`).

use arbitrary::{Arbitrary, Unstructured};

use rucuda_array::codegen::{c_type_to_dtype, parse_arguments, OperationAnalysis};
use rucuda_array::elementwise::{ElementwiseSpec, Variant};
use rucuda_jit::{Arch, Backend, CompileOptions, OutputKind};

/// Every target by name, in the order `cargo xtask fuzz` runs them.
pub const ALL: &[(&str, fn(&[u8]))] = &[
    ("arg_strings", arg_strings),
    ("elementwise_spec", elementwise_spec),
    ("operation_analysis", operation_analysis),
    ("cache_entry", cache_entry),
    ("include_scan", include_scan),
    ("compile_options", compile_options),
    ("driver_options", driver_options),
];

/// The target called `name`.
pub fn by_name(name: &str) -> Option<fn(&[u8])> {
    ALL.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}

/// PyCUDA-style C argument strings (`"float a, const float *x"`), rucuda-array's parser.
///
/// Checks: an accepted list prints (declarators joined by `, `) and parses back to the
/// same specs; a refused one points at a column inside the text (or one past its end)
/// and formats its message.
pub fn arg_strings(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = c_type_to_dtype(&text);
    match parse_arguments(&text) {
        Ok(args) => {
            let printed: Vec<String> = args.iter().map(|a| a.declarator()).collect();
            let printed = printed.join(", ");
            match parse_arguments(&printed) {
                Ok(again) => assert_eq!(again, args, "{text:?} printed as {printed:?}"),
                Err(e) => panic!("{text:?} was accepted, its printed form {printed:?} is not: {e}"),
            }
        }
        Err(e) => {
            let chars = text.chars().count();
            assert!(
                e.column >= 1 && e.column <= chars + 1,
                "column {} outside 1..={} for {text:?}",
                e.column,
                chars + 1
            );
            assert!(!e.to_string().is_empty());
        }
    }
}

/// Splits `data` at NUL bytes into at most `n` strings (missing ones are empty).
fn fields(data: &[u8], n: usize) -> Vec<String> {
    let mut out: Vec<String> = data
        .splitn(n, |&b| b == 0)
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect();
    out.resize(n, String::new());
    out
}

/// PyCUDA's `ElementwiseKernel(arguments, operation, name)` strings (plus preamble,
/// loop_prep and after_loop), NUL-separated: the spec is built and every variant's
/// source rendered (pure text, no GPU).
///
/// Checks: a rendered kernel names its entry point in its source and has a parameter
/// per user argument at least; the vectorized variant renders exactly when the spec
/// says it is vectorizable.
pub fn elementwise_spec(data: &[u8]) {
    let f = fields(data, 7);
    let spec = match parse_arguments(&f[0]) {
        Ok(args) => ElementwiseSpec::builder(f[2].clone())
            .args(args)
            .operation(f[1].clone())
            .preamble(f[3].clone())
            .loop_prep(f[4].clone())
            .after_loop(f[5].clone())
            .build(),
        Err(_) => return,
    };
    let Ok(spec) = spec else { return };
    // The last field picks the strided variant's rank and flags.
    let extra = f[6].as_bytes();
    let ndim = extra.first().map_or(1, |b| usize::from(*b % 16));
    let vectors = spec.args().iter().filter(|a| a.is_vector()).count();
    let strided: Vec<bool> = (0..vectors)
        .map(|k| extra.get(k + 1).is_some_and(|b| b & 1 == 1))
        .collect();
    let mut short = strided.clone();
    short.pop();
    for variant in [
        Variant::Contiguous,
        Variant::Vectorized,
        Variant::Ranged,
        Variant::Strided { ndim, strided },
        Variant::Strided {
            ndim,
            strided: short,
        },
    ] {
        if let Ok(k) = spec.render(&variant) {
            assert!(
                k.source.contains(&k.entry),
                "{variant:?}: entry not in source"
            );
            assert!(k.params.len() >= spec.args().len(), "{variant:?}: params");
            assert!(k.elements_per_thread >= 1);
        } else if variant == Variant::Vectorized {
            assert!(!spec.vectorizable(), "vectorizable, but the variant failed");
        }
    }
}

#[derive(Debug, Arbitrary)]
struct OperationInput {
    names: Vec<String>,
    operation: String,
}

/// The C-operation lexer and analysis of the generators (how `x[i]` is used) and its
/// rewrite.
///
/// Checks: every recorded `name[i]` span lies on character boundaries of the text and
/// starts with the name; rewriting nothing gives the text back.
pub fn operation_analysis(data: &[u8]) {
    let Ok(input) = OperationInput::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let names: Vec<&str> = input.names.iter().map(String::as_str).take(8).collect();
    let op = &input.operation;
    let a = OperationAnalysis::new(op, &names);
    for n in &names {
        let Some(u) = a.usage(n) else { continue };
        for span in &u.indexed {
            assert!(span.start <= span.end && span.end <= op.len(), "{span:?}");
            assert!(op.is_char_boundary(span.start) && op.is_char_boundary(span.end));
            assert!(
                op[span.clone()].starts_with(n),
                "{:?} for {n:?}",
                &op[span.clone()]
            );
        }
    }
    assert_eq!(&a.rewrite(|_| None), op);
    let _ = a.rewrite(|n| Some(format!("{n}_tile[k]")));
}

/// Kernel-cache entries as read from disk (rucuda-jit's entry decoder).
///
/// The first byte picks the mode: raw file bytes (header, checksum and all), or a
/// payload that gets a correct header so that the payload decoder is reached. Checks:
/// the decoder returns `Ok` or an error, and an accepted entry encodes back to the very
/// same bytes.
pub fn cache_entry(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 1 == 0 {
        if let Ok(again) = rucuda_jit::fuzzing::decode_cache_file(rest) {
            assert_eq!(
                again, rest,
                "an accepted entry does not encode back to itself"
            );
        }
    } else {
        let kind = u32::from(mode >> 1) % 6;
        if let Ok((file, again)) = rucuda_jit::fuzzing::decode_cache_payload(kind, rest) {
            assert_eq!(
                again, file,
                "an accepted entry does not encode back to itself"
            );
        }
    }
}

/// The `#include` scan of the cache key and the `RUCUDA_CACHE_MAX_SIZE` parser.
///
/// Checks: a directive's name is one line; a parsed size parses back from its decimal
/// form.
pub fn include_scan(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for (_, name) in rucuda_jit::fuzzing::include_directives(&text) {
        assert!(!name.contains('\n'), "{name:?}");
    }
    if let Some(v) = rucuda_jit::fuzzing::parse_cache_size(&text) {
        assert_eq!(
            rucuda_jit::fuzzing::parse_cache_size(&v.to_string()),
            Some(v)
        );
    }
}

#[derive(Debug, Arbitrary)]
struct OptionsInput {
    nvcc: bool,
    output: u8,
    arch: Option<String>,
    code: Option<String>,
    options: Vec<String>,
    include_dirs: Vec<String>,
    defines: Vec<(String, Option<String>)>,
    name_expressions: Vec<String>,
    std: Option<String>,
    max_registers: Option<u32>,
    switches: u8,
}

/// rucuda-jit's `CompileOptions` (every field from the input), their validation and the
/// option strings for NVRTC and nvcc; `Arch` parsing.
///
/// Checks: `validate` agrees with whether the chosen backend's strings build; the
/// strings start with the target and end with the user's options, in order; a parsed
/// architecture's `sm_` and `compute_` names parse back to it.
pub fn compile_options(data: &[u8]) {
    let Ok(i) = OptionsInput::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let parsed_arch = i.arch.as_deref().map(str::parse::<Arch>);
    if let Some(Ok(a)) = parsed_arch {
        assert_eq!(a.real().parse::<Arch>().ok(), Some(a), "{:?}", i.arch);
        assert_eq!(
            a.virtual_arch().parse::<Arch>().ok(),
            Some(a),
            "{:?}",
            i.arch
        );
    }
    let mut o = CompileOptions::new()
        .backend(if i.nvcc {
            Backend::Nvcc
        } else {
            Backend::Nvrtc
        })
        .output(match i.output % 4 {
            0 => OutputKind::Cubin,
            1 => OutputKind::Ptx,
            2 => OutputKind::Fatbin,
            _ => OutputKind::LtoIr,
        })
        .options(i.options.iter().take(16))
        .fast_math(i.switches & 1 != 0)
        .debug(i.switches & 2 != 0)
        .line_info(i.switches & 4 != 0)
        .relocatable(i.switches & 8 != 0)
        .toolkit_include(i.switches & 16 != 0)
        .no_extern_c(i.switches & 32 != 0);
    o.arch = parsed_arch.and_then(Result::ok);
    o.code = i.code;
    o.include_dirs = i.include_dirs.iter().take(8).map(Into::into).collect();
    o.defines = i.defines.into_iter().take(8).collect();
    o.name_expressions = i.name_expressions.into_iter().take(8).collect();
    o.std = i.std;
    o.max_registers = i.max_registers;
    let arch = o.arch.unwrap_or(Arch::SM_90);
    let valid = o.validate();
    let built = match o.backend {
        Backend::Nvrtc => o.nvrtc_args(arch),
        Backend::Nvcc => o.nvcc_args(arch),
    };
    assert_eq!(valid.is_ok(), built.is_ok(), "{valid:?} vs {built:?}");
    if let Ok(nvrtc) = o.nvrtc_args(arch) {
        assert!(nvrtc[0].starts_with("--gpu-architecture="), "{nvrtc:?}");
        assert!(nvrtc.ends_with(&o.options), "{nvrtc:?}");
    }
    if let Ok(nvcc) = o.nvcc_args(arch) {
        assert!(nvcc.ends_with(&o.options), "{nvcc:?}");
    }
    assert!(o.header_dirs().len() >= o.include_dirs.len());
}

#[derive(Debug, Arbitrary)]
struct DriverInput {
    max_registers: Option<u32>,
    optimization_level: Option<u32>,
    debug: bool,
    line: bool,
    verbose: bool,
    ipc_hex: String,
}

/// rucuda-driver's `JitOptions` (the `(option, value)` pairs given to
/// `cuModuleLoadDataEx`) and the IPC handle's hex form (`IpcMemHandle::from_hex`, which
/// reads handles passed between processes).
///
/// Checks: options are refused exactly when the optimization level is past 4, else each
/// set option appears once; an accepted handle prints back to its digits.
pub fn driver_options(data: &[u8]) {
    let Ok(i) = DriverInput::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let o = rucuda_driver::JitOptions {
        max_registers: i.max_registers,
        optimization_level: i.optimization_level,
        generate_debug_info: i.debug,
        generate_line_info: i.line,
        log_verbose: i.verbose,
    };
    let pairs = rucuda_driver::fuzzing::jit_option_pairs(&o);
    let out_of_range = i.optimization_level.is_some_and(|l| l > 4);
    assert_eq!(pairs.is_err(), out_of_range, "{o:?}: {pairs:?}");
    assert_eq!(o.validate().is_err(), out_of_range);
    if let Ok(pairs) = pairs {
        let want = usize::from(i.max_registers.is_some())
            + usize::from(i.optimization_level.is_some())
            + usize::from(i.debug)
            + usize::from(i.line)
            + usize::from(i.verbose);
        assert_eq!(pairs.len(), want, "{pairs:?}");
        let mut keys: Vec<u32> = pairs.iter().map(|p| p.0).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), want, "an option given twice: {pairs:?}");
    }
    if let Ok(h) = rucuda_driver::IpcMemHandle::from_hex(&i.ipc_hex) {
        assert_eq!(h.to_hex(), i.ipc_hex.trim().to_ascii_lowercase());
        assert_eq!(
            rucuda_driver::IpcMemHandle::from_hex(&h.to_hex()).ok(),
            Some(h)
        );
    }
}

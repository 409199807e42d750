//! Our kernel sources compile with NVRTC (rucuda-jit, no GPU needed) and define every
//! kernel the generators look up, with no local-memory spills. Skipped, with one line,
//! when NVRTC cannot be loaded (`rucuda_testkit::nvrtc_or_skip!`, as in every crate).

use rucuda_jit::{compile, Arch, CompileOptions, OutputKind};
use rucuda_rand::kernels::{source, Family};

fn ptx(family: Family) -> String {
    let options = CompileOptions::new()
        .no_extern_c(true)
        .toolkit_include(false)
        .arch(Arch::SM_90)
        .output(OutputKind::Ptx)
        .cache_dir(None);
    match compile(&source(family).unwrap(), &options) {
        Ok(out) => String::from_utf8_lossy(&out.image).into_owned(),
        Err(e) => panic!("{family:?} kernels do not compile: {e}"),
    }
}

#[test]
fn every_family_compiles_with_all_its_kernels() {
    rucuda_testkit::nvrtc_or_skip!();
    let fills = [
        "raw_u32",
        "uniform_f32",
        "uniform_f64",
        "normal_f32",
        "normal_f64",
        "log_normal_f32",
        "log_normal_f64",
        "poisson_u32",
    ];
    for family in [
        Family::Philox,
        Family::Xorwow,
        Family::Mrg32k3a,
        Family::Sobol,
    ] {
        let ptx = ptx(family);
        let mut names: Vec<String> = Vec::new();
        if family == Family::Sobol {
            for w in ["rr_sobol32", "rr_sobol64"] {
                for f in fills {
                    let f = if w == "rr_sobol64" && f == "raw_u32" {
                        "raw_u64"
                    } else {
                        f
                    };
                    names.push(format!("{w}_{f}"));
                }
                names.push(format!("{w}_skipahead"));
            }
        } else {
            for f in fills {
                names.push(format!("{}_{f}", family.prefix()));
            }
            names.push(format!("{}_init", family.prefix()));
            names.push(format!("{}_skipahead", family.prefix()));
        }
        for n in &names {
            assert!(
                ptx.contains(&format!(".entry {n}(")),
                "{family:?}: kernel {n} missing"
            );
        }
        assert!(
            !ptx.contains(".local"),
            "{family:?}: local memory in the PTX"
        );
    }
}

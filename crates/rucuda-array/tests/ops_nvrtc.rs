//! Every built-in kernel template compiled with NVRTC for each dtype it serves.

use rucuda_array::elementwise::Variant;
use rucuda_array::ops::OpKey;
use rucuda_array::{DType, JitCompiler};
use rucuda_jit::{Arch, CompileOptions, OutputKind};

fn compile_batch(keys: &[OpKey]) {
    let mut src = String::new();
    for (k, key) in keys.iter().enumerate() {
        let spec = key.spec().unwrap_or_else(|e| panic!("{key:?}: {e}"));
        let arrays = spec.args().iter().filter(|a| a.is_vector()).count();
        let mut variants = vec![
            Variant::Contiguous,
            Variant::Strided {
                ndim: 2,
                strided: vec![true; arrays],
            },
        ];
        if spec.vectorizable() {
            variants.push(Variant::Vectorized);
        }
        for v in variants {
            let r = spec.render(&v).unwrap();
            src.push_str(&format!(
                "namespace rucuda_batch_{k}_{} {{\n{}\n}}\n",
                src.len(),
                r.source
            ));
        }
    }
    let t = std::time::Instant::now();
    let c = JitCompiler::with_options(
        CompileOptions::new()
            .no_extern_c(true)
            .cache_dir(None)
            .output(OutputKind::Ptx),
    );
    c.compile_for(&src, Arch::SM_90)
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{} keys in {:?}", keys.len(), t.elapsed());
}

#[test]
fn casts_between_every_pair_compile() {
    let mut keys = Vec::new();
    for from in DType::ALL {
        for to in DType::ALL {
            keys.push(OpKey::Cast { from, to });
        }
    }
    compile_batch(&keys);
}

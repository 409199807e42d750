//! CUDA source of the radix sort kernels (`cuda/`): `head.cuh` (key types and the key
//! transform), `rank.cuh` (ranking a tile by one digit with ballots or `__match_any_sync`),
//! `onesweep.cu` (histogram, offsets and one digit pass with decoupled look-back),
//! `block_sort.cu` (one block per short row), `select.cu` (top-k by radix select), `family.cu` (searchsorted, runs for unique and
//! run-length encoding). Pure text, compiled with NVRTC in CI.

use crate::codegen::template::render;
use crate::dtype::DType;
use crate::error::Result;

use super::keys::{value_c_type, KeyBits, KeyKind};
use super::tuning::PeerMatch;

const HEAD: &str = include_str!("cuda/head.cuh");
const KEY_MAP_IDENTITY: &str = include_str!("cuda/key_map_identity.cuh");
const RANK: &str = include_str!("cuda/rank.cuh");
const ONESWEEP: &str = include_str!("cuda/onesweep.cu");
const BLOCK_SORT: &str = include_str!("cuda/block_sort.cu");
const SELECT: &str = include_str!("cuda/select.cu");
const FAMILY: &str = include_str!("cuda/family.cu");

/// Which module of sort kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SortModule {
    /// `_histogram`, `_offsets` and `_onesweep`.
    Onesweep,
    /// `_block`: one block per row.
    Block,
    /// `_select_pass` and `_select_gather`: top-k by radix select.
    Select,
    /// `_searchsorted`, `_run_heads`, `_run_scatter`, `_run_counts`.
    Family,
}

/// One instantiation of the sort kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SortKernelSpec {
    /// The key type.
    pub key: DType,
    /// Largest first.
    pub descending: bool,
    /// Bytes of the values moving with the keys (0: none).
    pub value_size: usize,
    /// Threads per block.
    pub threads: u32,
    /// Keys per thread.
    pub items: u32,
    /// Which kernels.
    pub module: SortModule,
    /// How the ranking warps find their digit's lanes.
    pub peer_match: PeerMatch,
    /// Blocks of the onesweep digit pass that must fit a multiprocessor by registers (0:
    /// the compiler's choice; [`SortTuning::min_blocks`](super::SortTuning::min_blocks)).
    pub min_blocks: u32,
}

/// A rendered module: source and entry points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedSort {
    /// The whole source.
    pub source: String,
    /// Entry points: `[histogram, offsets, onesweep]` or `[block]`.
    pub entries: Vec<String>,
}

impl SortKernelSpec {
    /// The entry points' common prefix.
    pub fn name(&self) -> String {
        format!(
            "rucuda_sort_{}_{}_v{}_{}x{}{}{}",
            self.key.to_string().to_lowercase(),
            if self.descending { 'd' } else { 'a' },
            self.value_size,
            self.threads,
            self.items,
            match self.peer_match {
                PeerMatch::MatchAny => "",
                PeerMatch::Ballots => "_b",
            },
            if self.min_blocks > 0 {
                format!("_m{}", self.min_blocks)
            } else {
                String::new()
            }
        )
    }

    /// The source.
    ///
    /// ```
    /// use rucuda_array::{DType, sort::{PeerMatch, SortKernelSpec, SortModule}};
    /// let s = SortKernelSpec { key: DType::F32, descending: false, value_size: 4,
    ///     threads: 256, items: 16, module: SortModule::Onesweep,
    ///     peer_match: PeerMatch::MatchAny, min_blocks: 0 };
    /// let r = s.render()?;
    /// assert_eq!(r.entries.len(), 3);
    /// assert!(r.source.contains("#define RUCUDA_PEER_MATCH 0"));
    /// let b = SortKernelSpec { peer_match: PeerMatch::Ballots, ..s }.render()?;
    /// assert!(b.source.contains("#define RUCUDA_PEER_MATCH 1"));
    /// assert_ne!(b.entries, r.entries);
    /// let m = SortKernelSpec { min_blocks: 4, ..s }.render()?;
    /// assert!(m.source.contains("#define RUCUDA_MIN_BLOCKS 4"));
    /// assert_ne!(m.entries, r.entries);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn render(&self) -> Result<RenderedSort> {
        let key = KeyBits::of(self.key)?;
        let value_t = if self.value_size == 0 {
            "unsigned int"
        } else {
            value_c_type(self.value_size)?
        };
        let name = self.name();
        let kind = match key.kind {
            KeyKind::Unsigned => "0",
            KeyKind::Signed => "1",
            KeyKind::Float => "2",
        };
        let (body, entries) = match self.module {
            SortModule::Onesweep => (
                ONESWEEP,
                vec![
                    format!("{name}_histogram"),
                    format!("{name}_offsets"),
                    format!("{name}_onesweep"),
                ],
            ),
            SortModule::Block => (BLOCK_SORT, vec![format!("{name}_block")]),
            SortModule::Family => (
                FAMILY,
                ["searchsorted", "run_heads", "run_scatter", "run_counts"]
                    .iter()
                    .map(|k| format!("{name}_{k}"))
                    .collect(),
            ),
            SortModule::Select => (
                SELECT,
                vec![
                    format!("{name}_select_pass"),
                    format!("{name}_select_gather"),
                ],
            ),
        };
        let template = [HEAD, RANK, body].concat();
        let source = render(
            &template,
            &[
                ("KEY_T", key.c_type()),
                ("VALUE_T", value_t),
                ("KEY_KIND", kind),
                ("KEY_BITS", &key.bits.to_string()),
                ("DESCENDING", if self.descending { "1" } else { "0" }),
                ("VALUES", if self.value_size > 0 { "1" } else { "0" }),
                ("THREADS", &self.threads.to_string()),
                ("ITEMS", &self.items.to_string()),
                (
                    "PEER_MATCH",
                    match self.peer_match {
                        PeerMatch::MatchAny => "0",
                        PeerMatch::Ballots => "1",
                    },
                ),
                ("MIN_BLOCKS", &self.min_blocks.to_string()),
                ("INF_BITS", &format!("{:#x}ull", key.inf_bits)),
                ("KEY_MAP", KEY_MAP_IDENTITY),
                ("ENTRY", &name),
            ],
        )?;
        Ok(RenderedSort { source, entries })
    }
}

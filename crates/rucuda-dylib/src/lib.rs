//! Finding and opening the shared libraries rucuda loads at run time: the CUDA driver
//! (`libcuda.so.1`, in `rucuda-driver-sys`), NVRTC (in `rucuda-jit`) and NCCL (in
//! `rucuda-nccl`).
//!
//! Each of those crates describes its library once, as a [`LibrarySearch`] (override
//! variable, file names, folders, files inside NVIDIA's pip wheels, what to install), and
//! opens it with [`LibrarySearch::open`]: one search order, and one error when the
//! library is nowhere, [`NotFound`] — what was looked for, the first places, the override
//! variable and what to install, with every place behind `RUCUDA_DEBUG_LOADER=1`.
//!
//! ```no_run
//! use rucuda_dylib::{Folder, LibrarySearch, LibrarySpec, NotFound};
//! const NVRTC: LibrarySearch = LibrarySearch {
//!     spec: LibrarySpec {
//!         what: "NVRTC (libnvrtc.so.13)",
//!         override_env: "RUCUDA_NVRTC",
//!         install: "`pip install nvidia-cuda-nvrtc`",
//!     },
//!     names: &["libnvrtc.so.13"],
//!     folders: &[Folder::Env("CUDA_PATH", "lib64"), Folder::Fixed("/usr/local/cuda/lib64")],
//!     wheel_files: &["nvidia/cu13/lib/libnvrtc.so.13"],
//!     preload_beside: None,
//! };
//! let opened = NVRTC.open(&|n| std::env::var_os(n), |opened| Ok::<_, NotFound>(opened))?;
//! println!("NVRTC from {}", opened.opened_as);
//! # Ok::<(), NotFound>(())
//! ```
//!
//! Why a crate of its own: the three loaders sit in three crates, so what they share
//! must sit under all of them; and it reads Python's folders (NVIDIA ships NVRTC and
//! NCCL as pip wheels), which has no place in the raw bindings crate. It depends on
//! `libloading` alone. `rucuda-driver-sys` re-exports [`dynlib`] and [`search`] (and,
//! for old paths, [`python_sites`]) where they used to be.
//!
//! The modules, bottom up: [`dynlib`] opens one name or path and reads symbols;
//! [`search`] holds the spec and the not-found error and the path helpers;
//! [`python_sites`] finds site-packages folders; `library` is the search itself.

pub mod dynlib;
mod library;
pub mod python_sites;
pub mod search;

pub use library::{resolve_folders, Candidate, Folder, LibrarySearch, Opened};
pub use search::{LibrarySpec, NotFound, DEBUG_LOADER_ENV};

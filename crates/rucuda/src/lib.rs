//! The rucuda facade: re-exports every rucuda crate plus PyCUDA's tools. Not built yet: see the README's table.

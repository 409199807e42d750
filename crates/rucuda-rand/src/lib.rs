//! cuRAND-compatible random number generators written as our own kernels. Not built yet: see the README's table.

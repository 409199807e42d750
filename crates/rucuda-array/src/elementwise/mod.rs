//! PyCUDA's `ElementwiseKernel` (in progress).

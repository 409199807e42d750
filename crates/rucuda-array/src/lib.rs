//! NumPy-style GPU arrays (GpuArray) and the elementwise, reduction and scan kernel generators. Not built yet: see the README's table.

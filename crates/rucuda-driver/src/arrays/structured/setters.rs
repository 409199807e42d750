//! The builder methods every structured copy has (PyCUDA's `set_src_*`, `set_dst_*`
//! and attributes), written once as macros for the three copy types.

/// The setters every copy has (PyCUDA's `set_src_*`, `set_dst_*` and attributes).
macro_rules! copy_setters {
    () => {
        /// Copies from host memory (PyCUDA's `set_src_host`).
        pub fn src_host<T: DeviceRepr>(mut self, data: &'a [T]) -> Self {
            self.g.src.end = host_endpoint(data);
            self
        }

        /// Copies from device memory: a buffer or a view (PyCUDA's `set_src_device`).
        pub fn src_device<P: DevicePtr + ?Sized>(mut self, mem: &'a P) -> Self {
            self.g.src.end = device_endpoint(mem);
            self
        }

        /// Copies from memory named by its unified address: pinned, managed or ordinary
        /// host memory, the driver finds out which (PyCUDA's `set_src_unified`).
        pub fn src_unified<T: DeviceRepr>(mut self, data: &'a [T]) -> Self {
            self.g.src.end = unified_endpoint(data);
            self
        }

        /// Copies from an array (PyCUDA's `set_src_array`).
        pub fn src_array(mut self, array: &'a CudaArray) -> Self {
            self.g.src.end = Endpoint::Array(array);
            self
        }

        /// Copies into host memory (PyCUDA's `set_dst_host`).
        pub fn dst_host<T: DeviceRepr>(mut self, data: &'a mut [T]) -> Self {
            self.g.dst.end = host_endpoint_mut(data);
            self
        }

        /// Copies into device memory: a buffer or a mutable view (PyCUDA's `set_dst_device`).
        pub fn dst_device<P: $crate::memory::pointer::DevicePtrMut + ?Sized>(
            mut self,
            mem: &'a mut P,
        ) -> Self {
            self.g.dst.end = device_endpoint(&*mem);
            self
        }

        /// Copies into memory named by its unified address (PyCUDA's `set_dst_unified`).
        pub fn dst_unified<T: DeviceRepr>(mut self, data: &'a mut [T]) -> Self {
            self.g.dst.end = unified_endpoint_mut(data);
            self
        }

        /// Copies into an array (PyCUDA's `set_dst_array`).
        pub fn dst_array(mut self, array: &'a mut CudaArray) -> Self {
            self.g.dst.end = Endpoint::Array(&*array);
            self
        }

        /// Byte offset of the box in each source row (default 0).
        pub fn src_x_in_bytes(mut self, x: usize) -> Self {
            self.g.src.x_in_bytes = x;
            self
        }

        /// Row offset of the box in the source (default 0).
        pub fn src_y(mut self, y: usize) -> Self {
            self.g.src.y = y;
            self
        }

        /// Bytes from one source row to the next (linear memory only; default
        /// `width_in_bytes`).
        pub fn src_pitch(mut self, pitch: usize) -> Self {
            self.g.src.pitch = Some(pitch);
            self
        }

        /// Byte offset of the box in each destination row (default 0).
        pub fn dst_x_in_bytes(mut self, x: usize) -> Self {
            self.g.dst.x_in_bytes = x;
            self
        }

        /// Row offset of the box in the destination (default 0).
        pub fn dst_y(mut self, y: usize) -> Self {
            self.g.dst.y = y;
            self
        }

        /// Bytes from one destination row to the next (linear memory only; default
        /// `width_in_bytes`).
        pub fn dst_pitch(mut self, pitch: usize) -> Self {
            self.g.dst.pitch = Some(pitch);
            self
        }

        /// Bytes copied from each row.
        pub fn width_in_bytes(mut self, bytes: usize) -> Self {
            self.g.width_in_bytes = bytes;
            self
        }

        /// Rows copied (per slice).
        pub fn height(mut self, rows: usize) -> Self {
            self.g.height = rows;
            self
        }
    };
}

/// The setters of the 3D copies.
macro_rules! copy_setters_3d {
    () => {
        /// Slice offset of the box in the source (default 0).
        pub fn src_z(mut self, z: usize) -> Self {
            self.g.src.z = z;
            self
        }

        /// Rows per slice of linear source memory (default `height`; ignored for arrays).
        pub fn src_height(mut self, rows: usize) -> Self {
            self.g.src.height = Some(rows);
            self
        }

        /// Slice offset of the box in the destination (default 0).
        pub fn dst_z(mut self, z: usize) -> Self {
            self.g.dst.z = z;
            self
        }

        /// Rows per slice of linear destination memory (default `height`; ignored for
        /// arrays).
        pub fn dst_height(mut self, rows: usize) -> Self {
            self.g.dst.height = Some(rows);
            self
        }

        /// Slices copied (default 1).
        pub fn depth(mut self, slices: usize) -> Self {
            self.g.depth = slices;
            self
        }
    };
}

//! What every GPU generator offers ([`RandomGenerator`]: PyCUDA's `fill_uniform`,
//! `gen_normal`, ...) and the element types and outputs it fills. The plumbing the
//! generators share to offer it sits above, in the private `launch` module.

use rucuda_array::GpuArray;
use rucuda_driver::sys::CUdeviceptr;
use rucuda_driver::{
    Access, Context, DeviceAttribute, DeviceBuffer, DevicePtr, DeviceRepr, DeviceViewMut, InUse,
    Stream,
};

use crate::distributions::Distribution;
use crate::error::{Error, Result};
use crate::reference::Layout;

/// The bits an element holds, as our kernels see them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElementKind {
    /// `float`.
    F32,
    /// `double`.
    F64,
    /// 32-bit integers (`u32`, `i32`: the same bits).
    U32,
    /// 64-bit integers (`u64`, `i64`).
    U64,
}

impl ElementKind {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            ElementKind::F32 | ElementKind::U32 => 4,
            ElementKind::F64 | ElementKind::U64 => 8,
        }
    }

    /// Elements per 16-byte chunk of our layout.
    pub fn chunk(self) -> usize {
        16 / self.size()
    }
}

/// An element type our generators fill: `f32`, `f64`, `u32`, `i32`, `u64`, `i64`.
///
/// ```
/// use rucuda_rand::{ElementKind, RandElement};
/// assert_eq!(<i64 as RandElement>::KIND, ElementKind::U64);
/// ```
///
/// Any other element type is refused when the program is compiled:
///
/// ```compile_fail
/// use rucuda_driver::{DeviceBuffer, Stream};
/// use rucuda_rand::{Philox4x32_10, RandomGenerator};
/// fn fill(g: &mut Philox4x32_10, out: &mut DeviceBuffer<i8>, s: &Stream) {
///     g.fill_uniform(out, s).unwrap(); // i8 is not a RandElement
/// }
/// ```
///
/// (A type that is one, but not for that distribution, is a typed error at run time:
/// [`Error::Unsupported`] for normals into integers or Poisson counts into floats.)
pub trait RandElement: rucuda_array::Element + DeviceRepr {
    /// What the kernels write into it.
    const KIND: ElementKind;
}

impl RandElement for f32 {
    const KIND: ElementKind = ElementKind::F32;
}
impl RandElement for f64 {
    const KIND: ElementKind = ElementKind::F64;
}
impl RandElement for u32 {
    const KIND: ElementKind = ElementKind::U32;
}
impl RandElement for i32 {
    const KIND: ElementKind = ElementKind::U32;
}
impl RandElement for u64 {
    const KIND: ElementKind = ElementKind::U64;
}
impl RandElement for i64 {
    const KIND: ElementKind = ElementKind::U64;
}

/// Device memory a generator can fill: a [`DeviceBuffer`], a [`DeviceViewMut`], or a
/// contiguous [`GpuArray`].
pub trait RandOutput<T: RandElement> {
    /// The first element's address for a fill queued on `stream` (taken through the
    /// memory's use log, which records the write), the number of elements, and the
    /// context when known.
    fn target(&mut self, stream: &Stream) -> Result<(InUse<'_>, usize, Option<Context>)>;
}

impl<T: RandElement> RandOutput<T> for DeviceBuffer<T> {
    fn target(&mut self, stream: &Stream) -> Result<(InUse<'_>, usize, Option<Context>)> {
        let ptr = DevicePtr::device_range(&*self).use_on(stream, Access::Write)?;
        Ok((ptr, self.len(), Some(self.context().clone())))
    }
}

impl<T: RandElement> RandOutput<T> for DeviceViewMut<'_, T> {
    fn target(&mut self, stream: &Stream) -> Result<(InUse<'_>, usize, Option<Context>)> {
        let ptr = DevicePtr::device_range(&*self).use_on(stream, Access::Write)?;
        Ok((ptr, self.len(), None))
    }
}

impl<T: RandElement> RandOutput<T> for GpuArray<T> {
    /// Any array whose elements form one run of memory (C or Fortran order) is filled
    /// in memory order.
    fn target(&mut self, stream: &Stream) -> Result<(InUse<'_>, usize, Option<Context>)> {
        if !(self.is_c_contiguous() || self.is_f_contiguous()) {
            return Err(Error::NotContiguous {
                shape: self.shape().to_vec(),
                strides: self.strides().to_vec(),
            });
        }
        if self.context() != stream.context() {
            return Err(Error::ContextMismatch("output"));
        }
        // C or Fortran order: element 0 on every axis is the lowest address.
        let ptr = self.use_on(stream, Access::Write)?;
        Ok((ptr, self.len(), Some(self.context().clone())))
    }
}

/// What every generator offers: PyCUDA's `fill_*` and `gen_*` methods, on a stream.
///
/// The generator's states stay on the device between calls (a fill continues every
/// state's stream where the last call left it). Work is queued on `stream`; calls on
/// different streams must be ordered by the caller (events), as in PyCUDA.
///
/// Element `i` of an output comes from state `(i / c) % states` where `c` is 4 for 32-bit
/// and 2 for 64-bit elements ([`Layout`]); for the Sobol generators a state is a
/// dimension.
///
/// ```no_run
/// use rucuda_rand::{Philox4x32_10, RandomGenerator};
/// use rucuda_driver::{Device, DeviceBuffer, Stream};
/// let ctx = Device::get(0)?.primary_context()?;
/// let stream = Stream::null(&ctx);
/// let mut g = Philox4x32_10::new(&ctx, 1234)?;
/// let mut x = DeviceBuffer::<f32>::uninit(&ctx, 1 << 20)?;
/// g.fill_uniform(&mut x, &stream)?;
/// let y = g.gen_normal::<f64>(&[1000, 3], &stream)?;
/// # let _ = y;
/// # Ok::<(), rucuda_rand::Error>(())
/// ```
pub trait RandomGenerator {
    /// The generator's name (`"Philox4x32-10"`, ...).
    fn name(&self) -> &'static str;
    /// The context its states live in.
    fn context(&self) -> &Context;
    /// Number of states (for Sobol: dimensions).
    fn state_count(&self) -> usize;

    /// Fills `n` elements of kind `kind` at `ptr` with `dist`, on `stream`.
    ///
    /// # Safety
    /// `ptr .. ptr + n · kind.size()` must be device memory of the generator's context
    /// that stays allocated, and is not otherwise accessed, until the work on `stream` is
    /// done.
    unsafe fn fill_ptr(
        &mut self,
        ptr: CUdeviceptr,
        n: usize,
        kind: ElementKind,
        dist: Distribution,
        stream: &Stream,
    ) -> Result<()>;

    /// Where each element of a `T` output comes from.
    fn layout<T: RandElement>(&self) -> Layout
    where
        Self: Sized,
    {
        Layout::for_type::<T>(self.state_count())
    }

    /// Fills `out` with `dist`.
    fn fill<T: RandElement, O: RandOutput<T> + ?Sized>(
        &mut self,
        out: &mut O,
        dist: Distribution,
        stream: &Stream,
    ) -> Result<()>
    where
        Self: Sized,
    {
        if stream.context() != self.context() {
            return Err(Error::ContextMismatch("stream"));
        }
        let (used, n, ctx) = out.target(stream)?;
        if let Some(ctx) = ctx {
            if &ctx != self.context() {
                return Err(Error::ContextMismatch("output"));
            }
        }
        // SAFETY: the output holds `n` elements at `ptr`, borrowed for this call; its use
        // log recorded the write on `stream` (in `target`).
        unsafe { self.fill_ptr(used.ptr(), n, T::KIND, dist, stream) }
    }

    /// PyCUDA's `fill_uniform`: floats in (0, 1] (`curand_uniform`,
    /// `curand_uniform_double`), or raw bits for integers (`curand`).
    fn fill_uniform<T: RandElement, O: RandOutput<T> + ?Sized>(
        &mut self,
        out: &mut O,
        stream: &Stream,
    ) -> Result<()>
    where
        Self: Sized,
    {
        self.fill(out, Distribution::Uniform, stream)
    }

    /// PyCUDA's `fill_normal`: standard normal floats or doubles.
    fn fill_normal<T: RandElement, O: RandOutput<T> + ?Sized>(
        &mut self,
        out: &mut O,
        stream: &Stream,
    ) -> Result<()>
    where
        Self: Sized,
    {
        self.fill(out, Distribution::STANDARD_NORMAL, stream)
    }

    /// Normal floats or doubles with a mean and a standard deviation
    /// (`mean + stddev · curand_normal`, one fused multiply-add).
    fn fill_normal_with<T: RandElement, O: RandOutput<T> + ?Sized>(
        &mut self,
        out: &mut O,
        mean: f64,
        stddev: f64,
        stream: &Stream,
    ) -> Result<()>
    where
        Self: Sized,
    {
        self.fill(out, Distribution::Normal { mean, stddev }, stream)
    }

    /// PyCUDA's `fill_log_normal` (`curand_log_normal`).
    fn fill_log_normal<T: RandElement, O: RandOutput<T> + ?Sized>(
        &mut self,
        out: &mut O,
        mean: f64,
        stddev: f64,
        stream: &Stream,
    ) -> Result<()>
    where
        Self: Sized,
    {
        self.fill(out, Distribution::LogNormal { mean, stddev }, stream)
    }

    /// PyCUDA's `fill_poisson`: 32-bit counts (`curand_poisson`).
    fn fill_poisson<T: RandElement, O: RandOutput<T> + ?Sized>(
        &mut self,
        out: &mut O,
        lambda: f64,
        stream: &Stream,
    ) -> Result<()>
    where
        Self: Sized,
    {
        self.fill(out, Distribution::Poisson { lambda }, stream)
    }

    /// Raw bits (`curand`): 32-bit integers, or 64-bit ones (two 32-bit outputs, the first
    /// in the low half, for the 32-bit generators).
    fn fill_raw<T: RandElement, O: RandOutput<T> + ?Sized>(
        &mut self,
        out: &mut O,
        stream: &Stream,
    ) -> Result<()>
    where
        Self: Sized,
    {
        self.fill(out, Distribution::Raw, stream)
    }

    /// PyCUDA's `gen_uniform`: a new array of `shape` on `stream`, filled as
    /// [`fill_uniform`](Self::fill_uniform) does.
    fn gen_uniform<T: RandElement>(
        &mut self,
        shape: &[usize],
        stream: &Stream,
    ) -> Result<GpuArray<T>>
    where
        Self: Sized,
    {
        self.generate(shape, Distribution::Uniform, stream)
    }

    /// PyCUDA's `gen_normal`.
    fn gen_normal<T: RandElement>(
        &mut self,
        shape: &[usize],
        stream: &Stream,
    ) -> Result<GpuArray<T>>
    where
        Self: Sized,
    {
        self.generate(shape, Distribution::STANDARD_NORMAL, stream)
    }

    /// PyCUDA's `gen_log_normal`.
    fn gen_log_normal<T: RandElement>(
        &mut self,
        shape: &[usize],
        mean: f64,
        stddev: f64,
        stream: &Stream,
    ) -> Result<GpuArray<T>>
    where
        Self: Sized,
    {
        self.generate(shape, Distribution::LogNormal { mean, stddev }, stream)
    }

    /// PyCUDA's `gen_poisson`.
    fn gen_poisson<T: RandElement>(
        &mut self,
        shape: &[usize],
        lambda: f64,
        stream: &Stream,
    ) -> Result<GpuArray<T>>
    where
        Self: Sized,
    {
        self.generate(shape, Distribution::Poisson { lambda }, stream)
    }

    /// A new array of `shape` on `stream` filled with `dist`.
    fn generate<T: RandElement>(
        &mut self,
        shape: &[usize],
        dist: Distribution,
        stream: &Stream,
    ) -> Result<GpuArray<T>>
    where
        Self: Sized,
    {
        let mut out = GpuArray::<T>::empty(stream, shape)?;
        self.fill(&mut out, dist, stream)?;
        Ok(out)
    }
}

/// The device's multiprocessor count (at least 1).
pub(crate) fn multiprocessors(ctx: &Context) -> Result<u64> {
    let sms = ctx
        .device()
        .attribute(DeviceAttribute::MultiprocessorCount)?
        .max(1);
    Ok(sms as u64)
}

/// The default number of states: PyCUDA's (the multiprocessor count times 1024).
pub fn default_state_count(ctx: &Context) -> Result<usize> {
    Ok(multiprocessors(ctx)? as usize * 1024)
}

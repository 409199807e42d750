//! CPU tests (no GPU, no GL library): `GlFns` loaded from a fake GL made of Rust
//! `extern "system"` functions, and `BufferObject` driven through it; flag values
//! against the CUDA headers; error messages.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_void, CStr};

use rucuda_gl::sys;
use rucuda_gl::*;

const GL_INVALID_VALUE: u32 = 0x0501;
const GL_OUT_OF_MEMORY: u32 = 0x0505;

/// The fake GL's state, per thread (each test runs on its own thread).
#[derive(Default)]
struct Fake {
    next: u32,
    buffers: HashMap<u32, Option<Vec<u8>>>,
    bound: HashMap<u32, u32>,
    error: u32,
    deleted: Vec<u32>,
    fail_next_delete: bool,
}

thread_local! {
    static FAKE: RefCell<Fake> = RefCell::new(Fake { next: 1, ..Default::default() });
}

fn with<T>(f: impl FnOnce(&mut Fake) -> T) -> T {
    FAKE.with(|s| f(&mut s.borrow_mut()))
}

fn set_error(s: &mut Fake, e: u32) {
    if s.error == 0 {
        s.error = e;
    }
}

unsafe extern "system" fn gen_buffers(n: i32, out: *mut u32) {
    for i in 0..n as usize {
        let name = with(|s| {
            let name = s.next;
            s.next += 1;
            s.buffers.insert(name, None); // a name, not yet an object
            name
        });
        // SAFETY: the caller passes room for n names.
        unsafe { *out.add(i) = name };
    }
}
unsafe extern "system" fn delete_buffers(n: i32, names: *const u32) {
    for i in 0..n as usize {
        // SAFETY: the caller passes n names.
        let name = unsafe { *names.add(i) };
        with(|s| {
            s.buffers.remove(&name);
            s.deleted.push(name);
            s.bound.retain(|_, b| *b != name);
            if std::mem::take(&mut s.fail_next_delete) {
                set_error(s, GL_INVALID_VALUE);
            }
        });
    }
}
unsafe extern "system" fn bind_buffer(target: u32, name: u32) {
    with(|s| {
        if name != 0 {
            match s.buffers.get_mut(&name) {
                Some(b) => {
                    b.get_or_insert_with(Vec::new);
                }
                None => return set_error(s, GL_INVALID_VALUE),
            }
        }
        s.bound.insert(target, name);
    })
}
unsafe extern "system" fn buffer_data(target: u32, size: isize, data: *const c_void, _u: u32) {
    if size > 1 << 30 {
        return with(|s| set_error(s, GL_OUT_OF_MEMORY));
    }
    let bytes = if data.is_null() {
        vec![0xAB; size as usize]
    } else {
        // SAFETY: the caller passes `size` readable bytes.
        unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size as usize) }.to_vec()
    };
    with(|s| {
        let name = s.bound.get(&target).copied().unwrap_or(0);
        match s.buffers.get_mut(&name) {
            Some(b) if name != 0 => *b = Some(bytes),
            _ => set_error(s, 0x0502),
        }
    })
}
unsafe extern "system" fn buffer_sub_data(
    target: u32,
    offset: isize,
    size: isize,
    data: *const c_void,
) {
    // SAFETY: the caller passes `size` readable bytes.
    let src = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size as usize) };
    with(|s| {
        let name = s.bound.get(&target).copied().unwrap_or(0);
        let b = s.buffers.get_mut(&name).and_then(|b| b.as_mut());
        match b {
            Some(b) if (offset + size) as usize <= b.len() => {
                b[offset as usize..(offset + size) as usize].copy_from_slice(src)
            }
            _ => set_error(s, GL_INVALID_VALUE),
        }
    })
}
unsafe extern "system" fn get_buffer_sub_data(
    target: u32,
    offset: isize,
    size: isize,
    data: *mut c_void,
) {
    let bytes = with(|s| {
        let name = s.bound.get(&target).copied().unwrap_or(0);
        s.buffers
            .get(&name)
            .and_then(|b| b.as_ref())
            .map(|b| b[offset as usize..(offset + size) as usize].to_vec())
    });
    match bytes {
        // SAFETY: the caller passes room for `size` bytes.
        Some(b) => unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), data.cast(), b.len()) },
        None => with(|s| set_error(s, GL_INVALID_VALUE)),
    }
}
unsafe extern "system" fn get_integerv(pname: u32, out: *mut i32) {
    let v = with(|s| s.bound.get(&pname).copied().unwrap_or(0));
    // SAFETY: one GLint.
    unsafe { *out = v as i32 };
}
unsafe extern "system" fn get_error() -> u32 {
    with(|s| std::mem::take(&mut s.error))
}
unsafe extern "system" fn is_buffer(name: u32) -> u8 {
    with(|s| matches!(s.buffers.get(&name), Some(Some(_)))) as u8
}
unsafe extern "system" fn is_nothing(_name: u32) -> u8 {
    0
}

fn fake_loader(skip: &'static [&'static str]) -> impl FnMut(&CStr) -> *const c_void {
    move |name: &CStr| {
        let name = name.to_str().unwrap();
        if skip.contains(&name) {
            return std::ptr::null();
        }
        match name {
            "glGenBuffers" => gen_buffers as *const c_void,
            "glDeleteBuffers" => delete_buffers as *const c_void,
            "glBindBuffer" => bind_buffer as *const c_void,
            "glBufferData" => buffer_data as *const c_void,
            "glBufferSubData" => buffer_sub_data as *const c_void,
            "glGetBufferSubData" => get_buffer_sub_data as *const c_void,
            "glGetIntegerv" => get_integerv as *const c_void,
            "glGetError" => get_error as *const c_void,
            "glIsBuffer" => is_buffer as *const c_void,
            "glIsTexture" | "glIsRenderbuffer" => is_nothing as *const c_void,
            _ => std::ptr::null(),
        }
    }
}

fn fake_gl() -> GlFns {
    // SAFETY: every address is a function with the GL prototype of its name.
    unsafe { GlFns::load(fake_loader(&[])) }.unwrap()
}

#[test]
fn buffer_object_round_trips_through_loaded_functions() {
    let gl = fake_gl();
    // The caller's own binding survives our calls.
    // SAFETY: the fake GL needs no context.
    let callers = unsafe { gl.gl_gen_buffer() }.unwrap();
    // SAFETY: as above.
    unsafe { gl.gl_bind_buffer(GL_COPY_WRITE_BUFFER, callers) };

    // SAFETY: as above.
    let buf =
        unsafe { BufferObject::from_bytes(gl, &[1, 2, 3, 4, 5, 6, 7, 8], BufferUsage::StaticDraw) }
            .unwrap();
    assert_eq!(buf.size(), 8);
    assert_ne!(buf.name(), callers);
    // SAFETY: as above.
    assert!(unsafe { gl.gl_is_buffer(buf.name()) });
    assert_eq!(buf.to_vec().unwrap(), [1, 2, 3, 4, 5, 6, 7, 8]);
    buf.write(2, &[20, 30]).unwrap();
    let mut part = [0u8; 4];
    buf.read(1, &mut part).unwrap();
    assert_eq!(part, [2, 20, 30, 5]);
    // SAFETY: as above.
    let bound = unsafe { gl.gl_get_integer(GL_COPY_WRITE_BUFFER_BINDING) };
    assert_eq!(bound, callers as i32);

    // With no data: the size is allocated.
    // SAFETY: as above.
    let empty = unsafe { BufferObject::new(&gl, 100, BufferUsage::default()) }.unwrap();
    assert_eq!(empty.to_vec().unwrap().len(), 100);

    let name = buf.name();
    drop(buf);
    assert!(
        with(|s| s.deleted.contains(&name)),
        "drop did not delete the GL buffer"
    );
    // SAFETY: as above.
    assert!(!unsafe { gl.gl_is_buffer(name) });
    // into_name keeps the buffer.
    let kept = empty.into_name();
    // SAFETY: as above.
    assert!(unsafe { gl.gl_is_buffer(kept) });
    take_deferred_errors().unwrap();
}

#[test]
fn buffer_object_reports_bad_arguments_and_gl_errors() {
    let gl = fake_gl();
    // SAFETY: the fake GL needs no context.
    let e = unsafe { BufferObject::new(gl, 0, BufferUsage::StaticDraw) }.unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    // SAFETY: as above.
    let e = unsafe { BufferObject::new(gl, 2 << 30, BufferUsage::StaticDraw) }.unwrap_err();
    assert!(
        matches!(
            e,
            Error::Gl {
                call: "glBufferData",
                code: GL_OUT_OF_MEMORY
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("GL_OUT_OF_MEMORY"), "{e}");
    // SAFETY: as above.
    let buf = unsafe { BufferObject::new(gl, 16, BufferUsage::StaticDraw) }.unwrap();
    assert!(matches!(
        buf.read(10, &mut [0; 7]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        buf.write(usize::MAX, &[0; 2]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(buf.read(10, &mut [0; 6]).is_ok());

    // A GL error met while deleting is queued and returned by the next call.
    with(|s| s.fail_next_delete = true);
    drop(buf);
    let e = take_deferred_errors().unwrap_err();
    match &e {
        Error::Deferred(v) => {
            assert!(matches!(
                v[..],
                [Error::Gl {
                    call: "glDeleteBuffers",
                    code: GL_INVALID_VALUE
                }]
            ))
        }
        other => panic!("expected deferred errors, got {other}"),
    }
    take_deferred_errors().unwrap();
    with(|s| s.fail_next_delete = true);
    // SAFETY: as above.
    drop(unsafe { BufferObject::new(gl, 4, BufferUsage::StaticDraw) }.unwrap());
    // SAFETY: as above.
    let e = unsafe { BufferObject::new(gl, 4, BufferUsage::StaticDraw) }.unwrap_err();
    assert!(matches!(e, Error::Deferred(_)), "{e}");
    take_deferred_errors().unwrap();
}

#[test]
fn loading_reports_missing_functions() {
    // SAFETY: every address returned is a function with the prototype of its name.
    let e = unsafe { GlFns::load(fake_loader(&["glBindBuffer"])) }.unwrap_err();
    assert!(matches!(e, Error::GlFunctionMissing("glBindBuffer")), "{e}");
    // SAFETY: as above.
    let e = unsafe { GlFns::load(|_: &CStr| std::ptr::null()) }.unwrap_err();
    assert!(matches!(e, Error::GlFunctionMissing(_)), "{e}");
    // glGetBufferSubData may be missing (OpenGL ES): reading fails then, not loading.
    // SAFETY: as above.
    let gl = unsafe { GlFns::load(fake_loader(&["glGetBufferSubData"])) }.unwrap();
    // SAFETY: the fake GL needs no context.
    let buf = unsafe { BufferObject::new(gl, 4, BufferUsage::StaticDraw) }.unwrap();
    assert!(matches!(
        buf.read(0, &mut [0; 4]),
        Err(Error::GlFunctionMissing("glGetBufferSubData"))
    ));
    assert!(buf.write(0, &[1; 4]).is_ok());
}

#[test]
fn flags_match_the_cuda_headers() {
    use sys::{CUgraphicsMapResourceFlags as M, CUgraphicsRegisterFlags as R};
    assert_eq!(
        RegisterFlags::NONE.bits(),
        R::CU_GRAPHICS_REGISTER_FLAGS_NONE.0
    );
    assert_eq!(
        RegisterFlags::READ_ONLY.bits(),
        R::CU_GRAPHICS_REGISTER_FLAGS_READ_ONLY.0
    );
    assert_eq!(
        RegisterFlags::WRITE_DISCARD.bits(),
        R::CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD.0
    );
    assert_eq!(
        RegisterFlags::SURFACE_LDST.bits(),
        R::CU_GRAPHICS_REGISTER_FLAGS_SURFACE_LDST.0
    );
    assert_eq!(
        RegisterFlags::TEXTURE_GATHER.bits(),
        R::CU_GRAPHICS_REGISTER_FLAGS_TEXTURE_GATHER.0
    );
    assert_eq!(
        MapFlags::None.bits(),
        M::CU_GRAPHICS_MAP_RESOURCE_FLAGS_NONE.0
    );
    assert_eq!(
        MapFlags::ReadOnly.bits(),
        M::CU_GRAPHICS_MAP_RESOURCE_FLAGS_READ_ONLY.0
    );
    assert_eq!(
        MapFlags::WriteDiscard.bits(),
        M::CU_GRAPHICS_MAP_RESOURCE_FLAGS_WRITE_DISCARD.0
    );
    assert_eq!(MapFlags::default(), MapFlags::None);
}

#[test]
fn error_messages_say_what_went_wrong() {
    let e = Error::NoSuchGlObject {
        name: 42,
        expected: "texture",
    };
    assert_eq!(
        e.to_string(),
        "GL name 42 is not a texture of the current GL context"
    );
    let e = Error::AlreadyMapped { gl_name: 7 };
    assert!(e.to_string().contains("already mapped"), "{e}");
    let e = Error::WrongResourceKind {
        operation: "array",
        wanted: ResourceKind::Image,
        got: ResourceKind::Buffer,
        index: 1,
    };
    assert_eq!(
        e.to_string(),
        "`array` needs a resource of kind image, but resource 1 of the mapping is of kind buffer"
    );
    assert!(Error::NotMapped.to_string().contains("unmapped"));
    assert_eq!(Error::NotMapped.code(), None);
    // Registering needs a driver: without one the error says so (and is no panic).
    let e = Error::from(rucuda_driver::Error::InvalidArgument("x".into()));
    assert!(matches!(e, Error::Driver(_)));
}

//! OpenGL buffer and image interop. Not built yet: see the README's table.

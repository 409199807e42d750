#!/usr/bin/env bash
# Prepares a GPU machine for rucuda-gl's headless EGL tests and example.
#
# The GPU machine has NVIDIA's EGL driver (libEGL_nvidia and its vendor file
# /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json) but not libglvnd's loaders
# (libEGL.so.1, libGLdispatch.so.0, libOpenGL.so.0...). This script
#   1. unpacks Debian's libglvnd packages (the .deb files of the `.gl` folder) when
#      libEGL.so.1 is missing: into / and runs ldconfig when root (the recipe verified on
#      that machine), else into a private folder added to LD_LIBRARY_PATH;
#   2. points libglvnd at NVIDIA's EGL vendor file (__EGL_VENDOR_LIBRARY_FILENAMES) when
#      no NVIDIA vendor file is in libglvnd's default folders.
#
# Use: source it (it exports variables), from any directory:
#     source crates/rucuda-gl/gpu-setup.sh [DEB_DIR]
# or run it and evaluate what it prints:
#     eval "$(bash crates/rucuda-gl/gpu-setup.sh [DEB_DIR])"
# DEB_DIR defaults to $RUCUDA_GL_DEBS, else the first of <repo>/.gl, ./.gl that holds
# .deb files. Fetch them once, on a machine with apt (in the repository root):
#     mkdir -p .gl /tmp/amd64/partial
#     o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
#     apt-get $o update
#     (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
# Messages go to stderr; a failure to find the loaders is reported, not fatal (the tests
# then skip with a RUCUDA_SKIPPED line saying why).

_rucuda_gl_setup() {
    local script_dir deb_dir="" d f nvidia_json exports=""
    script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    for d in "${1:-}" "${RUCUDA_GL_DEBS:-}" "$script_dir/../../.gl" "$PWD/.gl"; do
        if [ -n "$d" ] && ls "$d"/*.deb >/dev/null 2>&1; then
            deb_dir=$(cd "$d" && pwd)
            break
        fi
    done

    if ldconfig -p 2>/dev/null | grep -q 'libEGL\.so\.1 '; then
        echo "gpu-setup: libEGL.so.1 is already installed" >&2
    elif [ -z "$deb_dir" ]; then
        echo "gpu-setup: libEGL.so.1 is missing and no .deb files were found (looked in" \
             "\$1, \$RUCUDA_GL_DEBS, $script_dir/../../.gl, $PWD/.gl)" >&2
    elif [ "$(id -u)" = 0 ]; then
        local n=0
        for f in "$deb_dir"/*.deb; do
            if dpkg -x "$f" /; then n=$((n + 1)); else echo "gpu-setup: dpkg -x $f failed" >&2; fi
        done
        ldconfig
        echo "gpu-setup: unpacked $n packages from $deb_dir into /" >&2
    else
        local root="${TMPDIR:-/tmp}/rucuda-gl-glvnd"
        mkdir -p "$root"
        for f in "$deb_dir"/*.deb; do dpkg -x "$f" "$root" || echo "gpu-setup: dpkg -x $f failed" >&2; done
        local libdir="$root/usr/lib/x86_64-linux-gnu"
        exports+="export LD_LIBRARY_PATH=\"$libdir\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\"
"
        echo "gpu-setup: not root: unpacked into $root (LD_LIBRARY_PATH)" >&2
    fi

    nvidia_json=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
    if [ -n "${__EGL_VENDOR_LIBRARY_FILENAMES:-}" ]; then
        echo "gpu-setup: __EGL_VENDOR_LIBRARY_FILENAMES is already set" >&2
    elif ls /usr/share/glvnd/egl_vendor.d/*nvidia*.json /etc/glvnd/egl_vendor.d/*nvidia*.json \
            >/dev/null 2>&1; then
        echo "gpu-setup: libglvnd finds NVIDIA's EGL vendor file in its default folders" >&2
    elif [ -f "$nvidia_json" ]; then
        exports+="export __EGL_VENDOR_LIBRARY_FILENAMES=$nvidia_json
"
        echo "gpu-setup: EGL vendor: $nvidia_json" >&2
    else
        echo "gpu-setup: no NVIDIA EGL vendor file found; EGL may find no device" >&2
    fi
    printf '%s' "$exports"
}

if (return 0 2>/dev/null); then
    # Sourced: apply the exports here.
    eval "$(_rucuda_gl_setup "$@")"
    unset -f _rucuda_gl_setup
else
    # Run: print the exports for `eval`.
    _rucuda_gl_setup "$@"
fi

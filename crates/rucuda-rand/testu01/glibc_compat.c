/* Debian's TestU01 archives (libtestu01-0-dev, built on glibc 2.38 or newer) call the C23
 * entry points of scanf, which older C libraries (bookworm's glibc 2.36) lack. These
 * forward them to the classic ones; the only difference, C23's binary integers ("0b101"
 * under %i), never occurs in what TestU01 reads. `cargo xtask testu01` links this file
 * into the SmallCrush harness beside the static archives. */
#include <stdarg.h>
#include <stdio.h>

int __isoc23_fscanf(FILE* stream, const char* format, ...)
{
    va_list args;
    va_start(args, format);
    int n = vfscanf(stream, format, args);
    va_end(args);
    return n;
}

int __isoc23_sscanf(const char* text, const char* format, ...)
{
    va_list args;
    va_start(args, format);
    int n = vsscanf(text, format, args);
    va_end(args);
    return n;
}

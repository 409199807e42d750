// pycuda::complex<T> for device code: what PyCUDA's kernels call the C types of NumPy's
// complex64 and complex128 (rucuda's own header, not PyCUDA's). Layout: two T, real
// first, as NumPy stores them; trivially default-constructible, so it can live in
// __shared__ memory.
#pragma once

// C++ linkage even when included inside SourceModule's extern "C" block.
extern "C++" {
namespace pycuda {

template <class T>
struct complex {
    T _re;
    T _im;

    complex() = default;
    __host__ __device__ complex(T re, T im = T()) : _re(re), _im(im) {}
    template <class U>
    __host__ __device__ complex(const complex<U> &z) : _re((T)z._re), _im((T)z._im) {}

    __host__ __device__ T real() const { return _re; }
    __host__ __device__ T imag() const { return _im; }

    __host__ __device__ complex &operator+=(const complex &z) { _re += z._re; _im += z._im; return *this; }
    __host__ __device__ complex &operator-=(const complex &z) { _re -= z._re; _im -= z._im; return *this; }
    __host__ __device__ complex &operator*=(const complex &z) { *this = *this * z; return *this; }
    __host__ __device__ complex &operator/=(const complex &z) { *this = *this / z; return *this; }

    __host__ __device__ friend complex operator+(const complex &a, const complex &b) { return complex(a._re + b._re, a._im + b._im); }
    __host__ __device__ friend complex operator-(const complex &a, const complex &b) { return complex(a._re - b._re, a._im - b._im); }
    __host__ __device__ friend complex operator*(const complex &a, const complex &b)
    {
        return complex(a._re * b._re - a._im * b._im, a._re * b._im + a._im * b._re);
    }
    __host__ __device__ friend complex operator/(const complex &a, const complex &b)
    {
        // Smith's algorithm (no overflow for large |b|), as NumPy's complex division:
        // a zero divisor gives each part divided by +0 (infinities or NaNs as NumPy's).
        if (::fabs(b._re) >= ::fabs(b._im)) {
            if (b._re == T(0) && b._im == T(0)) {
                const T zero = ::fabs(b._re);
                return complex(a._re / zero, a._im / zero);
            }
            const T r = b._im / b._re;
            const T d = b._re + b._im * r;
            return complex((a._re + a._im * r) / d, (a._im - a._re * r) / d);
        }
        const T r = b._re / b._im;
        const T d = b._re * r + b._im;
        return complex((a._re * r + a._im) / d, (a._im * r - a._re) / d);
    }
    __host__ __device__ friend complex operator+(const complex &a, T b) { return complex(a._re + b, a._im); }
    __host__ __device__ friend complex operator+(T a, const complex &b) { return complex(a + b._re, b._im); }
    __host__ __device__ friend complex operator-(const complex &a, T b) { return complex(a._re - b, a._im); }
    __host__ __device__ friend complex operator-(T a, const complex &b) { return complex(a - b._re, -b._im); }
    __host__ __device__ friend complex operator*(const complex &a, T b) { return complex(a._re * b, a._im * b); }
    __host__ __device__ friend complex operator*(T a, const complex &b) { return complex(a * b._re, a * b._im); }
    __host__ __device__ friend complex operator/(const complex &a, T b) { return complex(a._re / b, a._im / b); }
    __host__ __device__ friend complex operator/(T a, const complex &b) { return complex(a) / b; }
    __host__ __device__ friend complex operator-(const complex &a) { return complex(-a._re, -a._im); }
    __host__ __device__ friend complex operator+(const complex &a) { return a; }
    __host__ __device__ friend bool operator==(const complex &a, const complex &b) { return a._re == b._re && a._im == b._im; }
    __host__ __device__ friend bool operator!=(const complex &a, const complex &b) { return !(a == b); }
};

template <class T> __host__ __device__ T real(const complex<T> &z) { return z._re; }
template <class T> __host__ __device__ T imag(const complex<T> &z) { return z._im; }
template <class T> __host__ __device__ complex<T> conj(const complex<T> &z) { return complex<T>(z._re, -z._im); }
template <class T> __host__ __device__ T norm(const complex<T> &z) { return z._re * z._re + z._im * z._im; }
template <class T> __host__ __device__ T abs(const complex<T> &z) { return ::hypot(z._re, z._im); }
template <class T> __host__ __device__ T arg(const complex<T> &z) { return ::atan2(z._im, z._re); }
template <class T> __host__ __device__ complex<T> polar(T r, T theta) { return complex<T>(r * ::cos(theta), r * ::sin(theta)); }

// Inside this namespace the complex overloads hide the real ones: real arguments call
// the global (CUDA) functions explicitly.
template <class T> __host__ __device__ complex<T> exp(const complex<T> &z)
{
    const T e = ::exp(z._re);
    return complex<T>(e * ::cos(z._im), e * ::sin(z._im));
}
template <class T> __host__ __device__ complex<T> log(const complex<T> &z)
{
    return complex<T>(::log(pycuda::abs(z)), pycuda::arg(z));
}
template <class T> __host__ __device__ complex<T> log10(const complex<T> &z)
{
    const T inv_ln10 = (T)0.43429448190325182765112891891660508;
    return pycuda::log(z) * inv_ln10;
}
template <class T> __host__ __device__ complex<T> sqrt(const complex<T> &z)
{
    // The principal root, without cancellation.
    const T m = pycuda::abs(z);
    if (m == T(0)) {
        return complex<T>(T(0), z._im);
    }
    if (z._re >= T(0)) {
        const T t = ::sqrt((m + z._re) / T(2));
        return complex<T>(t, z._im / (T(2) * t));
    }
    const T t = ::sqrt((m - z._re) / T(2));
    return complex<T>(::fabs(z._im) / (T(2) * t), z._im < T(0) ? -t : t);
}
template <class T> __host__ __device__ complex<T> sin(const complex<T> &z)
{
    return complex<T>(::sin(z._re) * ::cosh(z._im), ::cos(z._re) * ::sinh(z._im));
}
template <class T> __host__ __device__ complex<T> cos(const complex<T> &z)
{
    return complex<T>(::cos(z._re) * ::cosh(z._im), -::sin(z._re) * ::sinh(z._im));
}
template <class T> __host__ __device__ complex<T> sinh(const complex<T> &z)
{
    return complex<T>(::sinh(z._re) * ::cos(z._im), ::cosh(z._re) * ::sin(z._im));
}
template <class T> __host__ __device__ complex<T> cosh(const complex<T> &z)
{
    return complex<T>(::cosh(z._re) * ::cos(z._im), ::sinh(z._re) * ::sin(z._im));
}
template <class T> __host__ __device__ complex<T> tan(const complex<T> &z)
{
    // tan(x + iy) = (sin 2x + i sinh 2y) / (cos 2x + cosh 2y)
    const T d = ::cos(T(2) * z._re) + ::cosh(T(2) * z._im);
    return complex<T>(::sin(T(2) * z._re) / d, ::sinh(T(2) * z._im) / d);
}
template <class T> __host__ __device__ complex<T> tanh(const complex<T> &z)
{
    // tanh(x + iy) = (sinh 2x + i sin 2y) / (cosh 2x + cos 2y)
    const T d = ::cosh(T(2) * z._re) + ::cos(T(2) * z._im);
    return complex<T>(::sinh(T(2) * z._re) / d, ::sin(T(2) * z._im) / d);
}
template <class T> __host__ __device__ complex<T> pow(const complex<T> &a, const complex<T> &b)
{
    if (a._re == T(0) && a._im == T(0)) {
        return complex<T>(b._re == T(0) && b._im == T(0) ? T(1) : T(0), T(0));
    }
    return pycuda::exp(b * pycuda::log(a));
}
template <class T> __host__ __device__ complex<T> pow(const complex<T> &a, T b) { return pycuda::pow(a, complex<T>(b)); }
template <class T> __host__ __device__ complex<T> pow(T a, const complex<T> &b) { return pycuda::pow(complex<T>(a), b); }

}  // namespace pycuda
}  // extern "C++"

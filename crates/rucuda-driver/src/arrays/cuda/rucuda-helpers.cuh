// rucuda-helpers.cuh: texel helpers for textures and surfaces of double and complex
// elements, over texture and surface objects (rucuda's counterpart of PyCUDA's
// pycuda-helpers.hpp, which works on the texture references CUDA 12 removed).
//
// Texture hardware has no 64-bit channels, so an array or linear texture of doubles holds
// each as two 32-bit ints (int2: x = low word, y = high word) and a complex<double> as
// int4 (x, y = the real part's low and high words; z, w = the imaginary part's), as
// PyCUDA's np_to_array does and as rucuda's ArrayElement for f64 and Complex<f64> lays
// them out. A complex<float> is two float channels (Complex<f32>: float2).
//
// Pick the element type with the template argument, as with tex2D<T>:
//   double d = fp_tex2D<double>(tex, x, y);
//   double2 z = fp_tex2D<double2>(tex, x, y);   // complex<double>: (re, im)
//   float2 c = fp_tex1Dfetch<float2>(tex, i);   // complex<float>: (re, im)
// double2 and float2 are cuDoubleComplex and cuFloatComplex; other types read as they
// are (fp_tex2D<float> is tex2D<float>). Doubles are fetched, never filtered: use point
// filtering and element-type reads for them (the hardware would filter the int words).
// Surface helpers take x as an element index and scale it to bytes, as PyCUDA's do.
#ifndef RUCUDA_HELPERS_CUH
#define RUCUDA_HELPERS_CUH

// Templates need C++ linkage, also when included inside the extern "C" block that
// SourceModule wraps sources in.
extern "C++" {

// How an element type is stored in a texture or surface, and the conversions.
template <typename T> struct rucuda_texel {
    typedef T stored;
    static __device__ __forceinline__ T decode(stored v) { return v; }
    static __device__ __forceinline__ stored encode(T v) { return v; }
};

template <> struct rucuda_texel<double> {
    typedef int2 stored;
    static __device__ __forceinline__ double decode(int2 v) { return __hiloint2double(v.y, v.x); }
    static __device__ __forceinline__ int2 encode(double v) {
        return make_int2(__double2loint(v), __double2hiint(v));
    }
};

template <> struct rucuda_texel<double2> {
    typedef int4 stored;
    static __device__ __forceinline__ double2 decode(int4 v) {
        return make_double2(__hiloint2double(v.y, v.x), __hiloint2double(v.w, v.z));
    }
    static __device__ __forceinline__ int4 encode(double2 v) {
        return make_int4(__double2loint(v.x), __double2hiint(v.x), __double2loint(v.y),
                         __double2hiint(v.y));
    }
};

// Textures -------------------------------------------------------------------------------

template <typename T> __device__ __forceinline__ T fp_tex1Dfetch(cudaTextureObject_t tex, int i) {
    return rucuda_texel<T>::decode(tex1Dfetch<typename rucuda_texel<T>::stored>(tex, i));
}

template <typename T> __device__ __forceinline__ T fp_tex1D(cudaTextureObject_t tex, float x) {
    return rucuda_texel<T>::decode(tex1D<typename rucuda_texel<T>::stored>(tex, x));
}

template <typename T>
__device__ __forceinline__ T fp_tex2D(cudaTextureObject_t tex, float x, float y) {
    return rucuda_texel<T>::decode(tex2D<typename rucuda_texel<T>::stored>(tex, x, y));
}

template <typename T>
__device__ __forceinline__ T fp_tex2DLayered(cudaTextureObject_t tex, float x, float y, int layer) {
    return rucuda_texel<T>::decode(
        tex2DLayered<typename rucuda_texel<T>::stored>(tex, x, y, layer));
}

template <typename T>
__device__ __forceinline__ T fp_tex3D(cudaTextureObject_t tex, float x, float y, float z) {
    return rucuda_texel<T>::decode(tex3D<typename rucuda_texel<T>::stored>(tex, x, y, z));
}

// Surfaces (x is an element index) -------------------------------------------------------

template <typename T>
__device__ __forceinline__ void fp_surf2Dwrite(T v, cudaSurfaceObject_t surf, int x, int y) {
    typedef typename rucuda_texel<T>::stored S;
    surf2Dwrite<S>(rucuda_texel<T>::encode(v), surf, x * (int)sizeof(S), y);
}

template <typename T>
__device__ __forceinline__ T fp_surf2Dread(cudaSurfaceObject_t surf, int x, int y) {
    typedef typename rucuda_texel<T>::stored S;
    return rucuda_texel<T>::decode(surf2Dread<S>(surf, x * (int)sizeof(S), y));
}

template <typename T>
__device__ __forceinline__ void fp_surf2DLayeredwrite(T v, cudaSurfaceObject_t surf, int x, int y,
                                                      int layer) {
    typedef typename rucuda_texel<T>::stored S;
    surf2DLayeredwrite<S>(rucuda_texel<T>::encode(v), surf, x * (int)sizeof(S), y, layer);
}

template <typename T>
__device__ __forceinline__ T fp_surf2DLayeredread(cudaSurfaceObject_t surf, int x, int y,
                                                  int layer) {
    typedef typename rucuda_texel<T>::stored S;
    return rucuda_texel<T>::decode(surf2DLayeredread<S>(surf, x * (int)sizeof(S), y, layer));
}

template <typename T>
__device__ __forceinline__ void fp_surf3Dwrite(T v, cudaSurfaceObject_t surf, int x, int y, int z) {
    typedef typename rucuda_texel<T>::stored S;
    surf3Dwrite<S>(rucuda_texel<T>::encode(v), surf, x * (int)sizeof(S), y, z);
}

template <typename T>
__device__ __forceinline__ T fp_surf3Dread(cudaSurfaceObject_t surf, int x, int y, int z) {
    typedef typename rucuda_texel<T>::stored S;
    return rucuda_texel<T>::decode(surf3Dread<S>(surf, x * (int)sizeof(S), y, z));
}

} // extern "C++"

#endif // RUCUDA_HELPERS_CUH

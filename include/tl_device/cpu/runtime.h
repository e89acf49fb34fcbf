// Everything a generated CPU kernel includes: scalar types, the gemm micro-kernel, math on
// every type, floor division, atomics and the run-time checks (device_assert, print).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <limits>
#include <type_traits>

#include "tl_device/cpu/gemm.h"
#include "tl_device/cpu/isa_check.h"
#include "tl_device/cpu/math_simd.h"
#include "tl_device/cpu/tile_cache.h"
#include "tl_device/cpu/types.h"

#if defined(_OPENMP) && (defined(__linux__) || defined(__APPLE__))
#include <dlfcn.h>
#include <omp.h>

namespace tl_cpu {
namespace detail {
// The OpenMP runtime must outlive every kernel library. After a parallel region its idle worker
// threads keep running inside the runtime (spinning, then sleeping), so if the host unloads the
// last kernel (dlclose when a kernel object is dropped, or at interpreter exit) and the runtime goes
// with it, those threads crash the process. Each kernel library therefore pins the OpenMP runtime it
// was linked against when it is loaded; the kernel library itself can still be unloaded.
__attribute__((constructor)) static void pin_openmp_runtime() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&omp_get_max_threads), &info) && info.dli_fname)
    (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}
}  // namespace detail
}  // namespace tl_cpu
#endif

namespace tl_cpu {

/// T.reinterpret: the bits of `x` as a value of `To` (same size).
template <typename To, typename From>
inline To bit_cast(const From& x) {
  static_assert(sizeof(To) == sizeof(From), "T.reinterpret between types of different sizes");
  To t;
  std::memcpy(&t, &x, sizeof(To));
  return t;
}

/// Value conversion between any two kernel scalar types (through float for the narrow floats).
template <typename To, typename From>
inline To cast(const From& x) {
  if constexpr (std::is_same<To, From>::value) {
    return x;
  } else if constexpr (std::is_integral<To>::value && !std::is_same<To, bool>::value &&
                       !std::is_integral<From>::value && !std::is_base_of<nibble_tag, From>::value) {
    // Float to integer as CUDA's cvt.rzi.sat does (and the emulator): truncate toward zero,
    // saturate at the type's range, NaN gives 0 -- never the wrap-around of an undefined C cast.
    const double v = static_cast<double>(x);
    if (v != v) return To(0);
    if (v <= static_cast<double>(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else if constexpr (std::is_base_of<nibble_tag, From>::value) {
    return cast<To>(static_cast<int>(x));
  } else if constexpr (std::is_base_of<nibble_tag, To>::value && std::is_integral<From>::value) {
    return To(x);  // integer to int4 / uint4 keeps the low bits, like every integer narrowing
  } else if constexpr (std::is_arithmetic<From>::value && std::is_arithmetic<To>::value) {
    return static_cast<To>(x);
  } else if constexpr (std::is_arithmetic<From>::value) {
    return To(static_cast<float>(x));
  } else {
    return static_cast<To>(static_cast<float>(x));
  }
}

template <typename T>
struct Promoted {
  using type = float;
};
template <>
struct Promoted<double> {
  using type = double;
};

template <typename T>
inline auto as_compute(const T& x) {
  if constexpr (std::is_arithmetic<T>::value)
    return x;
  else
    return static_cast<float>(x);
}

/// 2^x: float (and the narrow types, which compute in float) through the vectorisable exp2_f32.
inline float exp2_compute(float x) { return exp2_f32(x); }
inline double exp2_compute(double x) { return std::exp2(x); }

/// Math on any floating type: narrow types compute in float and round back.
#define TL_CPU_UNARY(name, expr) \
  template <typename T>          \
  inline T name(const T& v) {    \
    auto x = as_compute(v);      \
    using C = decltype(x);       \
    (void)sizeof(C);             \
    return cast<T>(expr);        \
  }
TL_CPU_UNARY(exp, std::exp(x))
TL_CPU_UNARY(exp2, exp2_compute(x))
TL_CPU_UNARY(log, std::log(x))
TL_CPU_UNARY(log2, std::log2(x))
TL_CPU_UNARY(log10, std::log10(x))
TL_CPU_UNARY(sqrt, std::sqrt(x))
TL_CPU_UNARY(rsqrt, C(1) / std::sqrt(x))
TL_CPU_UNARY(tanh, std::tanh(x))
TL_CPU_UNARY(sigmoid, C(1) / (C(1) + std::exp(-x)))
TL_CPU_UNARY(erf, std::erf(x))
TL_CPU_UNARY(floor, std::floor(x))
TL_CPU_UNARY(ceil, std::ceil(x))
TL_CPU_UNARY(round, std::nearbyint(x))
TL_CPU_UNARY(trunc, std::trunc(x))
TL_CPU_UNARY(sin, std::sin(x))
TL_CPU_UNARY(cos, std::cos(x))
TL_CPU_UNARY(abs, (x < C(0) ? -x : x))
#undef TL_CPU_UNARY

template <typename T>
inline T pow(const T& a, const T& b) {
  return cast<T>(std::pow(as_compute(a), as_compute(b)));
}
template <typename T>
inline T fmod_(const T& a, const T& b) {
  return cast<T>(std::fmod(as_compute(a), as_compute(b)));
}

template <typename T>
inline T min_(const T& a, const T& b) {
  return b < a ? b : a;
}
template <typename T>
inline T max_(const T& a, const T& b) {
  return a < b ? b : a;
}

/// Floor division and modulo (Python semantics) for integers; for floats, through floor.
/// Integer division and modulo never trap (docs: integer division by zero gives 0, as in the
/// emulator; the most negative value divided by -1 wraps to itself, remainder 0).
template <typename T>
inline T div_(T a, T b) {
  if (b == 0) return T(0);
  if constexpr (std::is_signed<T>::value) {
    if (b == T(-1)) return static_cast<T>(T(0) - static_cast<typename std::make_unsigned<T>::type>(a));
  }
  return a / b;
}
template <typename T>
inline T mod_(T a, T b) {
  if (b == 0) return T(0);
  if constexpr (std::is_signed<T>::value) {
    if (b == T(-1)) return T(0);
  }
  return a % b;
}

template <typename T>
inline T floordiv(T a, T b) {
  if constexpr (std::is_integral<T>::value) {
    if (b == 0) return T(0);
    if constexpr (std::is_signed<T>::value) {
      if (b == T(-1)) return div_(a, b);
    }
    T q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
  } else {
    return cast<T>(std::floor(as_compute(a) / as_compute(b)));
  }
}
template <typename T>
inline T floormod(T a, T b) {
  if constexpr (std::is_integral<T>::value) {
    if (b == 0) return T(0);
    if constexpr (std::is_signed<T>::value) {
      if (b == T(-1)) return T(0);
    }
    T r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  } else {
    auto x = as_compute(a), y = as_compute(b);
    return cast<T>(x - std::floor(x / y) * y);
  }
}

/// Atomic read-modify-write: *addr = f(*addr) through a compare-and-swap loop on the element's bits.
template <typename T, typename F>
inline void atomic_update(T* addr, F f) {
  using Bits = typename std::conditional<
      sizeof(T) == 8, uint64_t,
      typename std::conditional<sizeof(T) == 4, uint32_t,
                                typename std::conditional<sizeof(T) == 2, uint16_t, uint8_t>::type>::type>::
      type;
  Bits* p = reinterpret_cast<Bits*>(addr);
  Bits expected = __atomic_load_n(p, __ATOMIC_RELAXED);
  for (;;) {
    T cur;
    std::memcpy(&cur, &expected, sizeof(T));
    T next = f(cur);
    Bits desired;
    std::memcpy(&desired, &next, sizeof(T));
    if (__atomic_compare_exchange_n(p, &expected, desired, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return;
  }
}

/// The fence of an ordered T.atomic_add (a C++ memory order, the __ATOMIC_* numbering): a release fence
/// before a relaxed read-modify-write gives it release semantics, an acquire fence after it acquire
/// semantics.
template <int Order>
inline void memory_fence() {
  __atomic_thread_fence(Order);
}

/// T.atomic_load / T.atomic_store of a 32- or 64-bit element with a C++ memory order (the __ATOMIC_*
/// numbering: 0 relaxed, 2 acquire, 3 release, 5 seq_cst), on the element's bits.
template <int Order, typename T>
inline T atomic_load(const T* addr) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "T.atomic_load takes 32- and 64-bit elements");
  using Bits = typename std::conditional<sizeof(T) == 8, uint64_t, uint32_t>::type;
  Bits b = __atomic_load_n(reinterpret_cast<const Bits*>(addr), Order);
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}
template <int Order, typename T>
inline void atomic_store(T* addr, T v) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "T.atomic_store takes 32- and 64-bit elements");
  using Bits = typename std::conditional<sizeof(T) == 8, uint64_t, uint32_t>::type;
  Bits b;
  std::memcpy(&b, &v, sizeof(T));
  __atomic_store_n(reinterpret_cast<Bits*>(addr), b, Order);
}

/// Atomic add returning the element's previous value (T.atomic_add(..., return_prev=True)).
template <typename T>
inline T atomic_fetch_add(T* addr, T v) {
  if constexpr (std::is_integral<T>::value) {
    return __atomic_fetch_add(addr, v, __ATOMIC_RELAXED);
  } else {
    T prev;
    atomic_update(addr, [&](T cur) {
      prev = cur;
      return cast<T>(as_compute(cur) + as_compute(v));
    });
    return prev;
  }
}

/// Atomic add; floats and the 16-bit types go through a compare-and-swap loop.
template <typename T>
inline void atomic_add(T* addr, T v) {
  if constexpr (std::is_integral<T>::value) {
    __atomic_fetch_add(addr, v, __ATOMIC_RELAXED);
  } else {
    atomic_update(addr, [&](T cur) { return cast<T>(as_compute(cur) + as_compute(v)); });
  }
}

/// Atomic max / min: the element becomes v where v compares greater (less); a NaN never replaces a
/// value and a NaN element stays (the comparison is false), on every target alike.
template <typename T>
inline void atomic_max(T* addr, T v) {
  atomic_update(addr, [&](T cur) { return as_compute(v) > as_compute(cur) ? v : cur; });
}
template <typename T>
inline void atomic_min(T* addr, T v) {
  atomic_update(addr, [&](T cur) { return as_compute(v) < as_compute(cur) ? v : cur; });
}
/// One worker's copy of a large on-chip buffer, on the heap (64-byte aligned); `p` is null when
/// the allocation failed (the kernel then reports it instead of running).
template <typename T>
struct HeapTile {
  T* p;
  explicit HeapTile(int64_t n)
      : p(static_cast<T*>(
            std::aligned_alloc(64, ((static_cast<size_t>(n) * sizeof(T) + 63) / 64) * 64 + 64))) {}
  ~HeapTile() { std::free(p); }
  HeapTile(const HeapTile&) = delete;
  HeapTile& operator=(const HeapTile&) = delete;
};

template <typename T>
inline int print(const char* msg, const T& v) {
  std::printf("%s%.9g\n", msg, static_cast<double>(as_compute(v)));
  return 0;
}

/// A run-time error of the kernel (e.g. a null pointer-table entry): the first one reported becomes the
/// launch's error message; the kernel goes on (skipping the work that cannot run) and fails at its end.
inline void report_error(const char* msg, char* err, int errlen, int* status) {
#pragma omp critical(tl_device_assert)
  {
    if (*status == 0) {
      std::snprintf(err, errlen, "%s", msg);
      *status = 1;
    }
  }
}

/// Records the first failed assertion; the launcher turns it into a Python exception.
inline int device_assert(bool ok, const char* msg, char* err, int errlen, int* status) {
  if (!ok) {
#pragma omp critical(tl_device_assert)
    {
      if (*status == 0) {
        std::snprintf(err, errlen, "T.device_assert failed: %s", msg);
        *status = 1;
      }
    }
  }
  return 0;
}

}  // namespace tl_cpu

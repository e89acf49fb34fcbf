// Optional shared libraries opened at run time (dlopen): the CUDA driver, NVRTC and the OpenCL ICD
// loader. Nothing links against them, so the project builds and imports on machines without them.
#pragma once
#include <dlfcn.h>

#include <string>

namespace tl::dynlib {

/// dlopen(path, RTLD_NOW | RTLD_LOCAL); nullptr on failure, with dlerror's text in *error when given.
inline void* Open(const std::string& path, std::string* error = nullptr) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h && error) {
    const char* e = dlerror();
    *error = e ? e : path + ": cannot be loaded";
  }
  return h;
}

/// Looks `name` up in the library `lib` and stores it in *fn (a function pointer of the right type);
/// false when the library lacks it (*fn is then null).
template <typename F>
bool Sym(void* lib, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(dlsym(lib, name));
  return *fn != nullptr;
}

}  // namespace tl::dynlib

// Host kernels: the disk cache (content-addressed, atomic writes, verified on load), the host
// compiler invocation, dlopen, argument checking and launch.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>

#include "support/subprocess.h"
#include "ir/functor.h"
#include "ir/printer.h"
#include "arith/eval.h"
#include "arith/expr_depth.h"
#include "arith/index_check.h"
#include "runtime/module.h"
#include "runtime/cache_util.h"
#include "runtime/scalar_abi.h"
#include "target/cpu/codegen_cpu.h"
#include "transform/pipeline.h"

namespace tl {
namespace cache_util {

uint64_t Fnv(const std::string& s, uint64_t seed) {
  uint64_t h = 0xcbf29ce484222325ULL ^ seed;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}
std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}
std::string HashHex(const std::string& s) { return Hex(Fnv(s, 0)) + Hex(Fnv(s, 0x5bd1e995)); }

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}
bool ReadCacheFile(const std::string& path, size_t max_bytes, std::string* out) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || static_cast<size_t>(st.st_size) > max_bytes) return false;
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat fst;
  bool ok = fstat(fd, &fst) == 0 && S_ISREG(fst.st_mode) && fst.st_ino == st.st_ino && fst.st_dev == st.st_dev;
  std::string data;
  if (ok) {
    data.resize(static_cast<size_t>(fst.st_size));
    size_t got = 0;
    while (got < data.size()) {
      ssize_t r = read(fd, &data[got], data.size() - got);
      if (r <= 0) break;
      got += static_cast<size_t>(r);
    }
    ok = got == data.size();
  }
  close(fd);
  if (ok) *out = std::move(data);
  return ok;
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary);
  out << data;
  if (!out) throw UserError(ErrorKind::kCompile, "cannot write " + path);
}
void MakeDirs(const std::string& path) {
  std::string cur;
  std::stringstream ss(path);
  std::string part;
  if (!path.empty() && path[0] == '/') cur = "/";
  while (std::getline(ss, part, '/')) {
    if (part.empty()) continue;
    cur += part + "/";
    mkdir(cur.c_str(), 0755);
  }
}

int Run(const std::string& cmd, std::string* output) { return RunCommand(cmd, output); }

std::string CompilerCommand(const CompileOptions& opt) {
  if (!opt.cxx.empty()) return opt.cxx;
  const char* e = std::getenv("CXX");
  return e && *e ? e : "g++";
}

std::string CompilerVersion(const std::string& cxx) {
  static std::mutex mu;
  static std::map<std::string, std::string> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(cxx);
  if (it != cache.end()) return it->second;
  std::string out;
  Run(cxx + " --version", &out);
  return cache[cxx] = out.substr(0, out.find('\n'));
}

std::string CacheDir(const CompileOptions& opt) {
  if (!opt.cache_dir.empty()) return opt.cache_dir;
  if (const char* d = std::getenv("TILELANG_CACHE_DIR")) return d;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/tmp") + "/.cache/tilelang-cpp";
}

bool CacheDisabled(const CompileOptions& opt) {
  const char* d = std::getenv("TILELANG_DISABLE_CACHE");
  return !opt.use_cache || (d && *d && std::string(d) != "0");
}

constexpr size_t kMaxMetaBytes = 4096, kMaxLibraryBytes = size_t(512) << 20;

std::string EntryMeta(const std::string& so, const std::string& key) {
  return std::to_string(so.size()) + " " + HashHex(so) + " " + key + "\n";
}

// A cache entry is kernel.so plus kernel.meta holding the library's size, its hash and the
// entry's key. An entry whose files are not regular files of sane size (a FIFO, a symlink to
// /dev/zero), whose library does not match its meta (truncated, corrupted, half-written), or
// whose meta names another key (files copied from another entry) is rebuilt.
bool EntryValid(const std::string& dir, const std::string& key) {
  std::string meta, so;
  if (!ReadCacheFile(dir + "/kernel.meta", kMaxMetaBytes, &meta) || !ReadCacheFile(dir + "/kernel.so", kMaxLibraryBytes, &so))
    return false;
  return meta == EntryMeta(so, key);
}

std::string UniqueSuffix() {
  static std::atomic<uint64_t> counter{0};
  std::random_device rd;
  return std::to_string(getpid()) + "-" + std::to_string(counter++) + "-" + std::to_string(rd());
}

void AtomicWrite(const std::string& path, const std::string& data) {
  std::string tmp = path + ".tmp-" + UniqueSuffix();
  WriteFile(tmp, data);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw UserError(ErrorKind::kCompile, "cannot move " + tmp + " into the kernel cache");
  }
}

std::string DTypeOfParam(const Param& p) { return p.buffer ? p.buffer->dtype.str() : p.var->dtype.str(); }

}  // namespace cache_util
using namespace cache_util;

std::string CacheKey(const std::string& canonical_ir, const std::string& target, const CompileOptions& opt) {
  std::string cxx = CompilerCommand(opt);
  return HashHex(canonical_ir + "\n--target " + target + "\n--flags " + opt.flags + "\n--cxx " + cxx + " " +
                 CompilerVersion(cxx) + "\n--tilelang-cpp 0.1.0 cpu-abi 1");
}

std::shared_ptr<CpuModule> BuildCPU(const PrimFunc& f, const CompileOptions& opt) {
  CheckExprDepth(f);
  CheckStaticIndices(f);
  PrimFunc lowered = LowerForCPU(f);
  std::string source = CodegenCPU(lowered);
  // The device headers are part of what gets compiled, so their text is part of the key.
  std::string headers;
  for (const char* h : {"types.h", "gemm.h", "runtime.h"}) {
    std::string text;
    ReadFile(opt.include_dir + "/tl_device/cpu/" + h, &text);
    headers += text;
  }
  std::string key = CacheKey(PrintPrimFunc(f) + "\n" + source + "\n" + HashHex(headers), "cpu", opt);
  std::string root = CacheDir(opt);
  bool cache = !CacheDisabled(opt);
  std::string dir = cache ? root + "/" + key : root + "/nocache-" + UniqueSuffix();
  std::string so = dir + "/kernel.so";
  bool from_cache = cache && EntryValid(dir, key);
  if (!from_cache) {
    MakeDirs(dir);
    // Build in a private directory under fixed file names (so that concurrent builders of one
    // kernel produce byte-identical libraries), then publish with rename(): each builder
    // publishes a complete library and the last rename wins.
    std::string tag = UniqueSuffix();
    std::string work = dir + "/build-" + tag;
    MakeDirs(work);
    std::string src_path = work + "/kernel.cc", tmp_so = work + "/kernel.so";
    WriteFile(src_path, source);
    std::string inc = opt.include_dir;
    std::string cmd = "cd '" + work + "' && " + CompilerCommand(opt) + " " + opt.flags + " -I'" + inc +
                      "' kernel.cc -o kernel.so";
    std::string log;
    int rc = Run(cmd, &log);
    auto cleanup = [&]() {
      std::remove(src_path.c_str());
      std::remove(tmp_so.c_str());
      rmdir(work.c_str());
    };
    if (rc != 0) {
      cleanup();
      throw UserError(ErrorKind::kCompile, "the host compiler failed on the kernel generated for '" + f->name +
                                               "' (this is a TileLang-C++ bug if the program was accepted):\n" +
                                               cmd + "\n" + log.substr(0, 4000));
    }
    std::string bytes;
    ReadFile(tmp_so, &bytes);
    // Whatever squats on the entry's names and is not a regular file (a FIFO, a symlink, a
    // directory) is removed first; rename() replaces regular files atomically.
    for (const std::string& name : {so, dir + "/kernel.meta", dir + "/kernel.cc"}) {
      struct stat st;
      if (lstat(name.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
        if (std::remove(name.c_str()) != 0 && S_ISDIR(st.st_mode)) rmdir(name.c_str());
      }
    }
    if (std::rename(tmp_so.c_str(), so.c_str()) != 0) {
      cleanup();
      throw UserError(ErrorKind::kCompile, "cannot publish " + so);
    }
    AtomicWrite(dir + "/kernel.meta", EntryMeta(bytes, key));
    std::rename(src_path.c_str(), (dir + "/kernel.cc").c_str());
    cleanup();
  }
  // Paths are content-addressed, so dlopen's per-path caching can only ever return this kernel.
  void* handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    if (from_cache) {  // a valid-looking entry that does not load: rebuild it once
      std::remove((dir + "/kernel.meta").c_str());
      return BuildCPU(f, opt);
    }
    throw UserError(ErrorKind::kCompile, std::string("cannot load the compiled kernel: ") + dlerror());
  }
  void* entry = dlsym(handle, "tl_entry");
  if (!entry) throw InternalError("compiled kernel lacks tl_entry");
  if (!cache) {
    // The library stays mapped; the directory is scratch.
    std::remove(so.c_str());
    std::remove((dir + "/kernel.meta").c_str());
    std::remove((dir + "/kernel.cc").c_str());
    rmdir(dir.c_str());
  }
  return std::make_shared<CpuModule>(f, source, so, handle, entry, from_cache);
}

CpuModule::CpuModule(PrimFunc f, std::string source, std::string so_path, void* handle, void* entry, bool from_cache)
    : func_(std::move(f)), source_(std::move(source)), so_path_(std::move(so_path)), handle_(handle), entry_(entry),
      from_cache_(from_cache), syms_(SymbolicVars(func_)) {}

CpuModule::~CpuModule() {
  if (handle_) dlclose(handle_);
}

namespace {
std::string ShapeStr(const std::vector<int64_t>& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}
std::string ShapeStr(const Buffer& b) {
  std::string r = "(";
  for (size_t i = 0; i < b->shape.size(); ++i) r += (i ? ", " : "") + PrintExpr(b->shape[i]);
  return r + (b->shape.size() == 1 ? ",)" : ")");
}

// Evaluates a shape expression given bound symbols; returns false if it uses an unbound one.
bool EvalShape(const Expr& e, const std::map<const VarNode*, int64_t>& env, int64_t* out) { return EvalInt(e, env, out); }
}  // namespace

std::vector<int64_t> CheckArguments(const PrimFunc& func_, const std::vector<Var>& syms_, const std::vector<TensorArg>& args,
                                    const std::vector<int>& skip, const std::string& device) {
  const auto& params = func_->params;
  if (args.size() + skip.size() != params.size()) {
    throw UserError(ErrorKind::kArgument, "kernel '" + func_->name + "' takes " +
                                              std::to_string(params.size() - skip.size()) + " arguments but " +
                                              std::to_string(args.size()) + " were given");
  }
  std::map<const VarNode*, int64_t> env;
  std::map<const VarNode*, std::string> bound_by;
  size_t ai = 0;
  // Two rounds: first bind symbols from dims that are plain vars, then verify every dim.
  for (int round = 0; round < 2; ++round) {
    ai = 0;
    for (size_t pi = 0; pi < params.size(); ++pi) {
      if (std::find(skip.begin(), skip.end(), static_cast<int>(pi)) != skip.end()) continue;
      const Param& p = params[pi];
      const TensorArg& a = args[ai++];
      std::string pname = p.buffer ? p.buffer->name : p.var->name;
      std::string what = "argument " + std::to_string(pi) + " ('" + pname + "') of kernel '" + func_->name + "'";
      if (!p.buffer) {
        if (a.is_tensor) throw UserError(ErrorKind::kArgument, what + " is a scalar of type " + DTypeOfParam(p) + " but a tensor was given");
        continue;
      }
      if (!a.is_tensor) throw UserError(ErrorKind::kArgument, what + " expects a tensor of shape " + ShapeStr(p.buffer) + " and dtype " + DTypeOfParam(p) + ", got a Python scalar");
      if (round == 0) {
        if (device == "cpu" && a.device != "cpu")
          throw UserError(ErrorKind::kArgument, what + " is on device '" + a.device + "' but the kernel was compiled for the CPU; move it with .cpu()");
        if (device == "cuda" && a.device.rfind("cuda", 0) != 0)
          throw UserError(ErrorKind::kArgument, what + " is on device '" + a.device + "' but the kernel runs on a CUDA GPU; move it with .cuda()");
        if (a.dtype != DTypeOfParam(p))
          throw UserError(ErrorKind::kArgument, what + " expects dtype " + DTypeOfParam(p) + " but got " + a.dtype);
        if (a.shape.size() != p.buffer->shape.size())
          throw UserError(ErrorKind::kArgument, what + " expects a " + std::to_string(p.buffer->shape.size()) +
                                                    "-d tensor of shape " + ShapeStr(p.buffer) + " but got shape " + ShapeStr(a.shape));
        int64_t expect = 1;
        for (size_t d = a.shape.size(); d-- > 0;) {
          if (a.shape[d] != 1 && a.strides[d] != expect)
            throw UserError(ErrorKind::kArgument, what + " must be contiguous (row-major); got strides " + ShapeStr(a.strides) +
                                                      " for shape " + ShapeStr(a.shape) + "; pass .contiguous() / np.ascontiguousarray(...)");
          expect *= a.shape[d];
        }
      }
      for (size_t d = 0; d < a.shape.size(); ++d) {
        const Expr& dim = p.buffer->shape[d];
        if (auto* v = As<VarNode>(dim)) {
          auto it = env.find(v);
          if (it == env.end()) {
            int bits = v->dtype.bits();
            if (v->dtype.is_integer() && bits < 64 && a.shape[d] > (int64_t(1) << (bits - 1)) - 1)
              throw UserError(ErrorKind::kArgument, what + ": dimension " + std::to_string(d) + " is the symbol '" + v->name +
                                                        "' of type " + v->dtype.str() + ", which cannot hold " +
                                                        std::to_string(a.shape[d]) + "; declare it with T.dynamic('" +
                                                        v->name + "', 'int64')");
            env[v] = a.shape[d];
            bound_by[v] = pname + ".shape[" + std::to_string(d) + "]";
          } else if (it->second != a.shape[d]) {
            throw UserError(ErrorKind::kArgument, what + ": dimension " + std::to_string(d) + " is the symbol '" + v->name +
                                                      "', bound to " + std::to_string(it->second) + " by " + bound_by[v] +
                                                      ", but this tensor has " + std::to_string(a.shape[d]));
          }
          continue;
        }
        int64_t want;
        if (round == 1 || EvalShape(dim, env, &want)) {
          if (!EvalShape(dim, env, &want))
            throw UserError(ErrorKind::kArgument, what + ": dimension " + std::to_string(d) + " (" + PrintExpr(dim) + ") cannot be computed from the other arguments");
          if (want != a.shape[d])
            throw UserError(ErrorKind::kArgument, what + " expects shape " + ShapeStr(p.buffer) + " but got " +
                                                      ShapeStr(a.shape) + " (dimension " + std::to_string(d) + " should be " +
                                                      std::to_string(want) + ")");
        }
      }
    }
  }
  std::vector<int64_t> syms;
  for (auto& v : syms_) {
    auto it = env.find(v.get());
    if (it == env.end()) throw UserError(ErrorKind::kArgument, "symbolic dimension '" + v->name + "' of kernel '" + func_->name + "' is not bound by any argument");
    syms.push_back(it->second);
  }
  return syms;
}

std::vector<bool> WrittenParams(const PrimFunc& f) {
  class Writes : public IRVisitor {
   public:
    std::set<const BufferNode*> written;

   protected:
    void VisitStore(const StoreNode* n) override {
      written.insert(n->buffer.get());
      IRVisitor::VisitStore(n);
    }
    void VisitTileOp(const StmtNode* s) override {
      switch (s->kind) {
        case StmtKind::kCopy: written.insert(static_cast<const CopyNode*>(s)->dst.buffer.get()); break;
        case StmtKind::kGemm: written.insert(static_cast<const GemmNode*>(s)->C.buffer.get()); break;
        case StmtKind::kFill: written.insert(static_cast<const FillNode*>(s)->dst.buffer.get()); break;
        case StmtKind::kReduce: written.insert(static_cast<const ReduceNode*>(s)->dst.buffer.get()); break;
        case StmtKind::kAtomicAdd: written.insert(static_cast<const AtomicAddNode*>(s)->dst.buffer.get()); break;
        case StmtKind::kCumsum: written.insert(static_cast<const CumsumNode*>(s)->dst.buffer.get()); break;
        default: break;
      }
      IRVisitor::VisitTileOp(s);
    }
  } w;
  w.VisitStmt(f->body);
  std::vector<bool> out;
  for (auto& p : f->params) out.push_back(p.buffer && w.written.count(p.buffer.get()));
  return out;
}

std::vector<int64_t> CpuModule::Check(const std::vector<TensorArg>& args, const std::vector<int>& skip) const {
  return CheckArguments(func_, syms_, args, skip, "cpu");
}

std::vector<std::vector<int64_t>> CpuModule::OutputShapes(const std::vector<TensorArg>& inputs,
                                                          const std::vector<int>& out_idx) const {
  return ArgumentOutputShapes(func_, syms_, inputs, out_idx);
}

std::vector<std::vector<int64_t>> ArgumentOutputShapes(const PrimFunc& func_, const std::vector<Var>& syms_,
                                                       const std::vector<TensorArg>& inputs, const std::vector<int>& out_idx) {
  std::vector<int64_t> syms = CheckArguments(func_, syms_, inputs, out_idx, "any");
  std::map<const VarNode*, int64_t> env;
  for (size_t i = 0; i < syms_.size(); ++i) env[syms_[i].get()] = syms[i];
  std::vector<std::vector<int64_t>> out;
  for (int idx : out_idx) {
    const Param& p = func_->params.at(idx);
    if (!p.buffer) throw UserError(ErrorKind::kArgument, "out_idx names parameter " + std::to_string(idx) + ", which is a scalar");
    std::vector<int64_t> shape;
    for (auto& d : p.buffer->shape) {
      int64_t v;
      if (!EvalShape(d, env, &v))
        throw UserError(ErrorKind::kArgument, "cannot allocate output '" + p.buffer->name + "': its dimension " + PrintExpr(d) + " is not bound by the inputs");
      shape.push_back(v);
    }
    out.push_back(shape);
  }
  return out;
}

void CpuModule::Launch(const std::vector<TensorArg>& args) const {
  std::vector<int64_t> syms = Check(args);
  std::vector<void*> ptrs;
  std::vector<uint64_t> slots(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const Param& p = func_->params[i];
    if (p.buffer) {
      ptrs.push_back(args[i].data);
    } else {
      std::string what = "argument " + std::to_string(i) + " ('" + p.var->name + "') of kernel '" + func_->name + "'";
      PackScalar(ConvertScalar(args[i], p.var->dtype, what), &slots[i]);
      ptrs.push_back(&slots[i]);
    }
  }
  char err[512] = {0};
  using Entry = int (*)(void**, const int64_t*, char*, int);
  int rc = reinterpret_cast<Entry>(entry_)(ptrs.data(), syms.data(), err, sizeof(err));
  if (rc != 0) throw UserError(ErrorKind::kArgument, std::string("kernel '") + func_->name + "' failed: " + err);
}

}  // namespace tl

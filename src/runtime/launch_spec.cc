// LaunchSpec evaluation and the argument checks every runtime module shares; see launch_spec.h.
#include "runtime/launch_spec.h"

#include <algorithm>

#include <cstring>

#include "runtime/runtime_module.h"
#include "runtime/scalar_abi.h"
#include "support/error.h"

namespace tl {
namespace {

int64_t FloorDivI(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

std::string ShapeStr(const std::vector<int64_t>& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}

std::string ShapeStr(const std::vector<IntProgram>& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + s[i].text;
  return r + (s.size() == 1 ? ",)" : ")");
}

}  // namespace

bool IntProgram::Eval(const std::vector<int64_t>& syms, int64_t* out) const {
  if (!computable || code.empty()) return false;
  std::vector<int64_t> st;
  st.reserve(code.size());
  for (const Instr& in : code) {
    if (in.op == kConst) {
      st.push_back(in.value);
      continue;
    }
    if (in.op == kSym) {
      if (in.value < 0 || static_cast<size_t>(in.value) >= syms.size()) return false;
      st.push_back(syms[static_cast<size_t>(in.value)]);
      continue;
    }
    if (in.op == kNot) {
      if (st.empty()) return false;
      st.back() = !st.back();
      continue;
    }
    if (in.op == kSelect) {
      if (st.size() < 3) return false;
      int64_t e = st.back();
      st.pop_back();
      int64_t t = st.back();
      st.pop_back();
      st.back() = st.back() ? t : e;
      continue;
    }
    if (st.size() < 2) return false;
    int64_t y = st.back();
    st.pop_back();
    int64_t x = st.back(), r = 0;
    switch (in.op) {
      case kAdd: r = x + y; break;
      case kSub: r = x - y; break;
      case kMul: r = x * y; break;
      case kDiv:
        if (!y) return false;
        r = x / y;
        break;
      case kMod:
        if (!y) return false;
        r = x % y;
        break;
      case kFloorDiv:
        if (!y) return false;
        r = FloorDivI(x, y);
        break;
      case kFloorMod:
        if (!y) return false;
        r = x - FloorDivI(x, y) * y;
        break;
      case kMin: r = std::min(x, y); break;
      case kMax: r = std::max(x, y); break;
      case kXor: r = x ^ y; break;
      case kEQ: r = x == y; break;
      case kNE: r = x != y; break;
      case kLT: r = x < y; break;
      case kLE: r = x <= y; break;
      case kGT: r = x > y; break;
      case kGE: r = x >= y; break;
      case kAnd: r = x && y; break;
      case kOr: r = x || y; break;
      default: return false;
    }
    st.back() = r;
  }
  if (st.size() != 1) return false;
  *out = st.back();
  return true;
}

std::string LaunchSpec::Label(size_t i) const {
  std::string n = i < params.size() ? params[i].name : "?";
  return "argument " + std::to_string(i) + " ('" + n + "') of kernel '" + func_name + "'";
}

std::vector<int64_t> LaunchSpec::Check(const std::vector<TensorArg>& args, const std::vector<int>& skip,
                                       const std::string& device) const {
  if (args.size() + skip.size() != params.size()) {
    throw UserError(ErrorKind::kArgument,
                    "kernel '" + func_name + "' takes " + std::to_string(params.size() - skip.size()) +
                        " arguments but " + std::to_string(args.size()) + " were given");
  }
  std::vector<int64_t> env(syms.size(), 0);
  std::vector<bool> bound(syms.size(), false);
  std::vector<std::string> bound_by(syms.size());
  // Two rounds: first bind symbols from dims that are plain symbols, then verify every dim.
  for (int round = 0; round < 2; ++round) {
    size_t ai = 0;
    for (size_t pi = 0; pi < params.size(); ++pi) {
      if (std::find(skip.begin(), skip.end(), static_cast<int>(pi)) != skip.end()) continue;
      const ParamSpec& p = params[pi];
      const TensorArg& a = args[ai++];
      std::string what = Label(pi);
      if (!p.is_tensor) {
        if (a.is_tensor)
          throw UserError(ErrorKind::kArgument,
                          what + " is a scalar of type " + p.dtype.str() + " but a tensor was given");
        continue;
      }
      if (!a.is_tensor)
        throw UserError(ErrorKind::kArgument, what + " expects a tensor of shape " + ShapeStr(p.shape) +
                                                  " and dtype " + p.dtype.str() + ", got a Python scalar");
      if (round == 0) {
        if (device == "cpu" && a.device != "cpu")
          throw UserError(ErrorKind::kArgument,
                          what + " is on device '" + a.device +
                              "' but the kernel was compiled for the CPU; move it with .cpu()");
        if (device != "cpu" && device != "any" && a.device.rfind(device, 0) != 0)
          throw UserError(ErrorKind::kArgument,
                          what + " is on device '" + a.device + "' but the kernel runs on a " +
                              (device == "cuda" ? std::string("CUDA GPU; move it with .cuda()")
                                                : "'" + device + "' device"));
        if (a.dtype != p.dtype.str())
          throw UserError(
              ErrorKind::kArgument,
              what + " expects dtype " + p.dtype.str() + " but got " + a.dtype +
                  (a.dtype == "float4_e2m1fn_x2"
                       ? " (two fp4 values a byte: a T.float4_e2m1fn parameter takes such a tensor, its "
                         "last dimension half the declared one)"
                       : std::string()));
        if (a.shape.size() != p.shape.size())
          throw UserError(ErrorKind::kArgument, what + " expects a " + std::to_string(p.shape.size()) +
                                                    "-d tensor of shape " + ShapeStr(p.shape) +
                                                    " but got shape " + ShapeStr(a.shape));
        int64_t expect = 1;
        for (size_t d = a.shape.size(); d-- > 0;) {
          if (a.shape[d] != 1 && a.strides[d] != expect)
            throw UserError(ErrorKind::kArgument, what + " must be contiguous (row-major); got strides " +
                                                      ShapeStr(a.strides) + " for shape " +
                                                      ShapeStr(a.shape) +
                                                      "; pass .contiguous() / np.ascontiguousarray(...)");
          expect *= a.shape[d];
        }
      }
      for (size_t d = 0; d < a.shape.size(); ++d) {
        const IntProgram& dim = p.shape[d];
        int s = dim.LoneSymbol();
        if (s >= 0) {
          if (!bound[s]) {
            const SymbolSpec& v = syms[s];
            int bits = v.dtype.bits();
            if (v.dtype.is_integer() && bits < 64 && a.shape[d] > (int64_t(1) << (bits - 1)) - 1)
              throw UserError(ErrorKind::kArgument,
                              what + ": dimension " + std::to_string(d) + " is the symbol '" + v.name +
                                  "' of type " + v.dtype.str() + ", which cannot hold " +
                                  std::to_string(a.shape[d]) + "; declare it with T.dynamic('" + v.name +
                                  "', 'int64')");
            env[s] = a.shape[d];
            bound[s] = true;
            bound_by[s] = p.name + ".shape[" + std::to_string(d) + "]";
          } else if (env[s] != a.shape[d]) {
            throw UserError(ErrorKind::kArgument, what + ": dimension " + std::to_string(d) +
                                                      " is the symbol '" + syms[s].name + "', bound to " +
                                                      std::to_string(env[s]) + " by " + bound_by[s] +
                                                      ", but this tensor has " + std::to_string(a.shape[d]));
          }
          continue;
        }
        if (round == 0) continue;  // compound dims are verified once every plain symbol is bound
        int64_t want;
        bool all_bound = std::all_of(dim.code.begin(), dim.code.end(), [&](const IntProgram::Instr& in) {
          return in.op != IntProgram::kSym || bound[static_cast<size_t>(in.value)];
        });
        if (!all_bound || !dim.Eval(env, &want))
          throw UserError(ErrorKind::kArgument, what + ": dimension " + std::to_string(d) + " (" + dim.text +
                                                    ") cannot be computed from the other arguments");
        if (want != a.shape[d])
          throw UserError(ErrorKind::kArgument, what + " expects shape " + ShapeStr(p.shape) + " but got " +
                                                    ShapeStr(a.shape) + " (dimension " + std::to_string(d) +
                                                    " should be " + std::to_string(want) + ")");
      }
    }
  }
  for (size_t i = 0; i < syms.size(); ++i)
    if (!bound[i])
      throw UserError(ErrorKind::kArgument, "symbolic dimension '" + syms[i].name + "' of kernel '" +
                                                func_name + "' is not bound by any argument");
  size_t ai = 0;
  for (size_t pi = 0; pi < params.size(); ++pi) {
    if (std::find(skip.begin(), skip.end(), static_cast<int>(pi)) != skip.end()) continue;
    const TensorArg& a = args[ai++];
    int s = params[pi].size_of_sym;
    if (s < 0) continue;
    int64_t v = a.scalar_is_int ? a.scalar_int : static_cast<int64_t>(a.scalar);
    if (v != env[static_cast<size_t>(s)])
      throw UserError(ErrorKind::kArgument, Label(pi) + " is " + std::to_string(v) +
                                                ", but it is the size '" + syms[static_cast<size_t>(s)].name +
                                                "' of a tensor's shape, bound to " +
                                                std::to_string(env[static_cast<size_t>(s)]) + " by " +
                                                bound_by[static_cast<size_t>(s)]);
  }
  return env;
}

std::vector<std::vector<int64_t>> LaunchSpec::OutputShapes(const std::vector<TensorArg>& inputs,
                                                           const std::vector<int>& out_idx) const {
  std::vector<int64_t> env = Check(inputs, out_idx, "any");
  std::vector<std::vector<int64_t>> out;
  for (int idx : out_idx) {
    if (idx < 0 || static_cast<size_t>(idx) >= params.size())
      throw UserError(ErrorKind::kArgument, "out_idx " + std::to_string(idx) + " is out of range");
    const ParamSpec& p = params[static_cast<size_t>(idx)];
    if (!p.is_tensor)
      throw UserError(ErrorKind::kArgument,
                      "out_idx names parameter " + std::to_string(idx) + ", which is a scalar");
    std::vector<int64_t> shape;
    for (auto& d : p.shape) {
      int64_t v;
      if (!d.Eval(env, &v))
        throw UserError(ErrorKind::kArgument, "cannot allocate output '" + p.name + "': its dimension " +
                                                  d.text + " is not bound by the inputs");
      shape.push_back(v);
    }
    out.push_back(shape);
  }
  return out;
}

std::vector<int64_t> TensorMapDims(const LaunchSpec& spec, const TensorMapSpec& m,
                                   const std::vector<TensorArg>& args,
                                   const std::vector<int64_t>& sym_values) {
  const TensorArg& a = args.at(static_cast<size_t>(m.param));
  auto values =
      [&](std::vector<int64_t> d) {  // 16U4_ALIGN16B / 16U6_ALIGN16B count values: 2 / 4 in 3 a byte
        if (m.format == 1 && !d.empty()) d.back() *= 2;
        if (m.format == 2 && !d.empty()) d.back() = d.back() * 4 / 3;
        return d;
      };
  if (m.shape.empty()) return values(a.shape);
  std::vector<int64_t> dims;
  int64_t n = 1, want = 1;
  for (const IntProgram& p : m.shape) {
    int64_t v = 0;
    if (!p.Eval(sym_values, &v))
      throw UserError(ErrorKind::kArgument, "the TMA view " + p.text + " of " +
                                                spec.Label(static_cast<size_t>(m.param)) +
                                                " cannot be computed from the arguments");
    dims.push_back(v);
    n *= v;
  }
  for (int64_t d : a.shape) want *= d;
  if (n != want)
    throw UserError(ErrorKind::kArgument, "a TMA copy tiles " + spec.Label(static_cast<size_t>(m.param)) +
                                              " as " + std::to_string(n) + " elements; the argument has " +
                                              std::to_string(want));
  return values(dims);
}

std::vector<int64_t> LaunchSpec::Grid(const std::vector<int64_t>& sym_values,
                                      const std::vector<TensorArg>& args) const {
  std::vector<int64_t> values = sym_values;
  for (size_t i = 0; i < params.size(); ++i) {
    const bool int_scalar =
        !params[i].is_tensor && !params[i].dtype.is_float() && i < args.size() && !args[i].is_tensor;
    values.push_back(int_scalar ? ConvertScalar(args[i], params[i].dtype, Label(i)).i : 0);
  }
  std::vector<int64_t> g;
  for (auto& e : grid) {
    int64_t v;
    if (!e.Eval(values, &v))
      throw UserError(
          ErrorKind::kArgument,
          "the grid extent " + e.text + " of kernel '" + func_name +
              "' cannot be computed from the arguments (it depends on a float scalar or a value the "
              "kernel computes, or divides by zero)");
    if (v < 0)
      throw UserError(ErrorKind::kArgument, "the grid extent " + e.text + " of kernel '" + func_name +
                                                "' is " + std::to_string(v) + " for these arguments");
    g.push_back(v);
  }
  while (g.size() < 3) g.push_back(1);
  for (size_t i = 0; i < 3; ++i)  // a cluster launch takes whole clusters
    if (g[i] % cluster[i])
      throw UserError(ErrorKind::kArgument,
                      "kernel '" + func_name + "' is launched in clusters of " + std::to_string(cluster[0]) +
                          " x " + std::to_string(cluster[1]) + " x " + std::to_string(cluster[2]) +
                          " blocks (T.ClusterKernel), but its grid's " + "xyz"[i] + " extent is " +
                          std::to_string(g[i]) + " for these arguments, not a multiple of " +
                          std::to_string(cluster[i]));
  return g;
}

}  // namespace tl

namespace tl {

std::vector<uint64_t> PackKernelArgs(const LaunchSpec& spec, const std::vector<TensorArg>& args,
                                     const std::string& device, std::vector<int64_t>* sym_values) {
  std::vector<int64_t> sv = spec.Check(args, {}, device);
  std::vector<uint64_t> slots(args.size() + sv.size(), 0);
  for (size_t i = 0; i < args.size(); ++i) {
    const ParamSpec& p = spec.params[i];
    if (p.is_tensor)
      std::memcpy(&slots[i], &args[i].data, sizeof(void*));
    else
      PackScalar(ConvertScalar(args[i], p.dtype, spec.Label(i)), &slots[i]);
  }
  for (size_t i = 0; i < sv.size(); ++i) {
    TensorArg a;
    a.is_tensor = false;
    a.scalar_is_int = true;
    a.scalar_int = sv[i];
    PackScalar(ConvertScalar(a, spec.syms[i].dtype, "the symbolic dimension '" + spec.syms[i].name + "'"),
               &slots[args.size() + i]);
  }
  if (sym_values) *sym_values = sv;
  return slots;
}

}  // namespace tl

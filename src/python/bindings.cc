// nanobind bindings: the only file that knows about Python. It exposes IR construction (the
// builder the front end drives), printing, structural comparison, the simplifier, and the
// compile / launch entry points of the backends.
#include <cstdlib>
#include <algorithm>

#include <nanobind/nanobind.h>
#include <cmath>
#include <cstdint>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <nanobind/stl/set.h>

#include "arith/expr_depth.h"
#include "arith/simplify.h"
#include "ir/functor.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "transform/hoist_workspaces.h"
#include "ir/work.h"
#include "emulator/emulator.h"
#include "runtime/cuda_driver.h"
#include "runtime/cache_util.h"
#include "runtime/runtime_module.h"
#include "runtime/module.h"
#include "runtime/scalar_abi.h"
#include "layout/fragment.h"
#include "layout/user_layout.h"
#include "layout/mfma_fragment.h"
#include "op/tile_op_checks.h"
#include "target/cuda/codegen_cuda.h"
#include "target/cpu/codegen_cpu.h"
#include "target/backend.h"
#include "target/cuda/nvrtc.h"
#include "target/launch_spec_builder.h"
#include "target/target.h"
#include "transform/pass_config.h"
#include "transform/pipeline.h"
#include "transform/gpu_passes.h"
#include "transform/gpu_options.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tl {
void BindOpenCL(nb::module_& m);  // OpenCL backend: bindings_opencl.cc
}  // namespace tl

namespace tl {
namespace {

using SpanT = std::tuple<std::string, int, int>;
Span ToSpan(const std::optional<SpanT>& s) {
  if (!s) return {};
  return {std::get<0>(*s), std::get<1>(*s), std::get<2>(*s)};
}

DataType ParseType(const std::string& s) {
  DataType t;
  if (!DataType::Parse(s, &t)) throw UserError(ErrorKind::kType, "unknown data type '" + s + "'");
  return t;
}

BinaryOp ParseBinOp(const std::string& s) {
  for (int i = 0; i <= static_cast<int>(BinaryOp::kShr); ++i)
    if (s == BinaryOpName(static_cast<BinaryOp>(i))) return static_cast<BinaryOp>(i);
  throw InternalError("unknown binary op " + s);
}

Scope ParseScope(const std::string& s) {
  if (s == "global") return Scope::kGlobal;
  if (s == "shared" || s == "shared.dyn") return Scope::kShared;
  if (s == "local.fragment" || s == "fragment") return Scope::kFragment;
  if (s == "local") return Scope::kLocal;
  if (s == "local.var") return Scope::kLocalVar;
  if (s == "shared.tmem") return Scope::kTensorMemory;
  throw UserError(ErrorKind::kType, "unknown memory scope '" + s + "'");
}

ForKind ParseForKind(const std::string& s) {
  if (s == "serial") return ForKind::kSerial;
  if (s == "parallel") return ForKind::kParallel;
  if (s == "pipelined") return ForKind::kPipelined;
  if (s == "unroll") return ForKind::kUnrolled;
  if (s == "vectorized") return ForKind::kVectorized;
  throw InternalError("unknown loop kind " + s);
}

Region MakeRegion(const Buffer& b, const std::vector<std::pair<Expr, Expr>>& ranges) {
  Region r{b, {}};
  for (auto& p : ranges) r.ranges.push_back({p.first, p.second});
  return r;
}

bool FitsInt(DataType t, int64_t v) {
  if (t.is_bool()) return v == 0 || v == 1;
  int bits = t.bits();
  if (bits >= 64) return t.is_int() || v >= 0;
  if (t.is_int()) return v >= -(int64_t(1) << (bits - 1)) && v < (int64_t(1) << (bits - 1));
  return v >= 0 && v < (int64_t(1) << bits);
}

// A typed integer constant: the value must fit the type (T.int32(2**40 + 5) is an error, not 5).
Expr CheckedIntImm(DataType t, const nb::int_& value) {
  nb::object py = nb::borrow(value);
  if (t.is_float()) return FloatImm(t, nb::cast<double>(nb::float_(py)));
  int64_t v = 0;
  uint64_t u = 0;
  if (t.is_uint() && t.bits() == 64 && !nb::try_cast<int64_t>(py, v) && nb::try_cast<uint64_t>(py, u))
    return IntImm(t, static_cast<int64_t>(u));  // above 2^63 - 1: kept as its bits
  if (!nb::try_cast<int64_t>(py, v) || !FitsInt(t, v)) {
    std::string text = nb::cast<std::string>(nb::str(py));
    if (text.size() > 40) text = "an integer of " + std::to_string(text.size()) + " digits";
    // 64 bits is the widest integer type: there the only advice is a smaller value.
    const bool widest = t.bits() >= 64 && !t.is_bool();
    throw UserError(ErrorKind::kType,
                    "the constant " + text + " does not fit in " + t.str() +
                        (widest ? std::string(" (") + (t.is_uint() ? "0 .. 2^64 - 1" : "-2^63 .. 2^63 - 1") +
                                      "), the widest integer type; reduce the value"
                                : "; use a wider type (e.g. T.int64) or reduce the value"));
  }
  return IntImm(t, v);
}

// A Python float given where an integer type is expected: converted as C does (truncation toward
// zero); infinities give the type's extreme values (T.infinity("int32") is INT32_MAX); NaN and
// values out of range are errors.
Expr FloatToIntImm(DataType t, double v) {
  if (std::isnan(v))
    throw UserError(ErrorKind::kType, "NaN cannot be converted to the integer type " + t.str());
  int bits = t.is_bool() ? 1 : t.bits();
  if (std::isinf(v)) {
    if (t.is_bool()) return IntImm(t, 1);
    if (t.is_uint()) return IntImm(t, v < 0 ? 0 : (bits >= 64 ? -1 : (int64_t(1) << bits) - 1));
    if (bits >= 64) return IntImm(t, v < 0 ? INT64_MIN : INT64_MAX);
    return IntImm(t, v < 0 ? -(int64_t(1) << (bits - 1)) : (int64_t(1) << (bits - 1)) - 1);
  }
  double tr = std::trunc(v);
  if (t.is_bool()) return IntImm(t, v != 0);
  if (tr < -9.3e18 || tr > 9.2e18 || !FitsInt(t, static_cast<int64_t>(tr)))
    throw UserError(ErrorKind::kType, "the constant " + std::to_string(v) + " does not fit in " + t.str());
  return IntImm(t, static_cast<int64_t>(tr));
}

const char* ErrorClassName(ErrorKind k) {
  switch (k) {
    case ErrorKind::kSyntax: return "TileLangSyntaxError";
    case ErrorKind::kType: return "TileLangTypeError";
    case ErrorKind::kCompile: return "TileLangCompileError";
    case ErrorKind::kArgument: return "TileLangArgumentError";
    case ErrorKind::kUnsupported: return "TileLangUnsupportedError";
    case ErrorKind::kResource: return "TileLangResourceError";
    case ErrorKind::kLayout: return "TileLangLayoutError";
  }
  return "TileLangError";
}

}  // namespace
}  // namespace tl

namespace tl {
void BindCompile(nb::module_& m);
}  // namespace tl

/// What `buf.data` gives in the DSL: the buffer whose storage a T.Tensor(..., data=) view shares.
struct BufferStorage {
  tl::Buffer buffer;
};

NB_MODULE(_ffi, m) {
  using namespace tl;

  // nanobind lists every bound object still alive when the interpreter shuts down. After an uncaught error
  // the traceback keeps kernels and IR alive to that point, so each failing script ended in screens of
  // "leaked" lines that are not leaks. The list is for our own leak check (tests/leaks/extension_leaks.py
  // sets this).
  if (!std::getenv("TILELANG_NB_LEAK_WARNINGS")) nb::set_leak_warnings(false);

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const UserError& e) {
      nb::object mod = nb::module_::import_("tilelang.errors");
      nb::object cls = mod.attr(ErrorClassName(e.kind()));
      nb::object err = cls(e.what());
      const Span& s = e.span();
      if (s.defined()) err.attr("span") = nb::make_tuple(s.file, s.line, s.col);
      PyErr_SetObject(cls.ptr(), err.ptr());
    } catch (const InternalError& e) {
      nb::object cls = nb::module_::import_("tilelang.errors").attr("TileLangInternalError");
      PyErr_SetString(cls.ptr(), e.what());
    }
  });

  // ---- IR node classes ------------------------------------------------------------------------
  nb::class_<ExprNode>(m, "Expr")
      .def_prop_ro("dtype", [](const ExprNode& e) { return e.dtype.str(); })
      .def_prop_ro("kind", [](const ExprNode& e) { return static_cast<int>(e.kind); });
  nb::class_<IntImmNode, ExprNode>(m, "IntImm").def_prop_ro("value", [](const IntImmNode& n) {
    return n.value;
  });
  nb::class_<FloatImmNode, ExprNode>(m, "FloatImm").def_prop_ro("value", [](const FloatImmNode& n) {
    return n.value;
  });
  nb::class_<StringImmNode, ExprNode>(m, "StringImm").def_prop_ro("value", [](const StringImmNode& n) {
    return n.value;
  });
  nb::class_<VarNode, ExprNode>(m, "Var").def_prop_ro("name", [](const VarNode& n) { return n.name; });
  nb::class_<BinaryNode, ExprNode>(m, "BinaryExpr");
  nb::class_<NotNode, ExprNode>(m, "NotExpr");
  nb::class_<CastNode, ExprNode>(m, "CastExpr");
  nb::class_<SelectNode, ExprNode>(m, "SelectExpr");
  nb::class_<CallNode, ExprNode>(m, "CallExpr").def_prop_ro("op", [](const CallNode& n) { return n.op; });
  nb::class_<BufferLoadNode, ExprNode>(m, "BufferLoad")
      .def_prop_ro("buffer", [](const BufferLoadNode& n) { return n.buffer; })
      .def_prop_ro("indices", [](const BufferLoadNode& n) { return n.indices; });

  nb::class_<BufferNode>(m, "Buffer")
      .def_prop_ro("name", [](const BufferNode& b) { return b.name; })
      .def_prop_ro("dtype", [](const BufferNode& b) { return b.dtype.str(); })
      .def_prop_ro("shape", [](const BufferNode& b) { return b.shape; })
      .def_prop_ro("scope", [](const BufferNode& b) { return std::string(ScopeName(b.scope)); })
      // TileLang's `buf.data` (the storage handle), taken by T.Tensor(shape, dtype, data=buf.data) to
      // declare a view; the owner of a view's storage is `storage_owner`.
      .def_prop_ro("data", [](nb::object self) { return BufferStorage{nb::cast<Buffer>(self)}; })
      .def_prop_ro("view_of", [](const BufferNode& b) { return b.data; });
  nb::class_<BufferStorage>(m, "BufferStorage").def_prop_ro("buffer", [](const BufferStorage& d) {
    return d.buffer;
  });

  nb::class_<Region>(m, "Region")
      .def(nb::new_(
          [](const Buffer& b, const std::vector<std::pair<Expr, Expr>>& r) { return MakeRegion(b, r); }))
      .def_prop_ro("buffer", [](const Region& r) { return r.buffer; })
      .def_prop_ro("mins",
                   [](const Region& r) {
                     std::vector<Expr> v;
                     for (auto& x : r.ranges) v.push_back(x.min);
                     return v;
                   })
      .def_prop_ro("extents", [](const Region& r) {
        std::vector<Expr> v;
        for (auto& x : r.ranges) v.push_back(x.extent);
        return v;
      });

  nb::class_<StmtNode>(m, "Stmt").def_prop_ro("kind",
                                              [](const StmtNode& s) { return static_cast<int>(s.kind); });
  nb::class_<PrimFuncNode>(m, "PrimFunc")
      .def_prop_ro("name", [](const PrimFuncNode& f) { return f.name; })
      .def_prop_ro("attrs", [](const PrimFuncNode& f) { return f.attrs; })
      .def_prop_ro("params", [](const PrimFuncNode& f) {
        std::vector<std::pair<Var, Buffer>> v;
        for (auto& p : f.params) v.push_back({p.var, p.buffer});
        return v;
      });

  // ---- builder ---------------------------------------------------------------------------------
  m.def("valid_dtype", [](const std::string& s) {
    DataType t;
    return DataType::Parse(s, &t);
  });
  m.def("canonical_dtype", [](const std::string& s) { return ParseType(s).str(); });
  m.def("int_imm", [](const std::string& t, nb::int_ v) { return CheckedIntImm(ParseType(t), v); });
  m.def("float_imm", [](const std::string& t, double v) {
    DataType dt = ParseType(t);
    if (dt.is_integer() || dt.is_bool()) return FloatToIntImm(dt, v);
    return FloatImm(dt, v);
  });
  m.def("string_imm", &StringImm);
  m.def("var", [](const std::string& n, const std::string& t) { return MakeVar(n, ParseType(t)); });
  m.def("binary", [](const std::string& op, const Expr& a, const Expr& b) {
    // An integer literal that does not fit the other operand's type widens the operation to
    // int64 (`bx * 10**12` is 64-bit arithmetic on every backend), instead of being narrowed.
    auto widen = [](const Expr& lit, const Expr& other) {
      int64_t v;
      if (!AsConstInt(lit, &v) || !lit->dtype.is_integer() || !other->dtype.is_integer() ||
          other->dtype.bits() >= 64 || As<IntImmNode>(other))
        return other;
      return FitsInt(other->dtype, v) ? other : Cast(DataType::Int(64), other);
    };
    Expr x = widen(b, a), y = widen(a, b);
    return Binary(ParseBinOp(op), x, y);
  });
  m.def("logical_not", &Not);
  m.def("bit_not", &BitNot);
  m.def("cast", [](const std::string& t, const Expr& a) { return Cast(ParseType(t), a); });
  m.def("select", &Select);
  m.def("call", [](const std::string& t, const std::string& op, const std::vector<Expr>& a) {
    // Builtins may return nothing ("void") or an opaque value ("handle").
    DataType rt = t == "void" ? DataType::Void() : t == "handle" ? DataType::Handle() : ParseType(t);
    return Call(rt, op, a);
  });
  m.def("load", [](const Buffer& b, const std::vector<Expr>& idx) { return Load(b, idx); });
  m.def(
      "buffer",
      [](const std::string& name, const std::string& t, const std::vector<Expr>& shape,
         const std::string& scope, std::optional<SpanT> span, std::shared_ptr<const BufferNode> data,
         int64_t byte_offset) {
        Scope sc = ParseScope(scope);
        DataType dt = ParseType(t);
        if (dt.is_handle() || dt.is_void())
          throw UserError(ErrorKind::kType, "buffer '" + name + "' cannot hold elements of type " + dt.str(),
                          ToSpan(span));
        if (dt.lanes() != 1)
          throw UserError(ErrorKind::kUnsupported,
                          "buffer '" + name + "' has the vector type " + dt.str() +
                              "; declare it with the element type " + dt.element_of().str() +
                              " and a last dimension " + std::to_string(dt.lanes()) + " times larger",
                          ToSpan(span));
        if (sc != Scope::kGlobal && sc != Scope::kLocalVar) {
          if (shape.empty())
            throw UserError(ErrorKind::kType,
                            "on-chip buffer '" + name +
                                "' has the empty shape (); give it a shape such as "
                                "(1,), or use T.alloc_var(dtype) for a scalar",
                            ToSpan(span));
          for (auto& d : shape) {
            int64_t v;
            if (AsConstInt(d, &v) && v <= 0)
              throw UserError(ErrorKind::kType,
                              "on-chip buffer '" + name + "' has the extent " + std::to_string(v) +
                                  "; extents must be positive",
                              ToSpan(span));
          }
        }
        Buffer b = MakeBuffer(name, dt, shape, sc, ToSpan(span));
        return data ? MakeBufferView(b, data, byte_offset) : b;
      },
      "name"_a, "dtype"_a, "shape"_a, "scope"_a, "span"_a = nb::none(), "data"_a.none() = nb::none(),
      "byte_offset"_a = 0);
  m.def(
      "attr_stmt",
      [](std::shared_ptr<const BufferNode> node, const std::string& key, const Expr& value, const Stmt& body,
         std::optional<SpanT> s) { return AttrStmt(node, key, value, body, ToSpan(s)); },
      "node"_a.none(), "key"_a, "value"_a, "body"_a, "span"_a.none());

  m.def("store", [](const Buffer& b, const Expr& v, const std::vector<Expr>& i, std::optional<SpanT> s) {
    return Store(b, v, i, ToSpan(s));
  });
  m.def("evaluate", [](const Expr& v, std::optional<SpanT> s) { return Evaluate(v, ToSpan(s)); });
  m.def("let", [](const Var& v, const Expr& x, const Stmt& body, std::optional<SpanT> s) {
    return Let(v, x, body, ToSpan(s));
  });
  m.def("for_", [](const Var& v, const Expr& mn, const Expr& ext, const std::string& kind, const Stmt& body,
                   const std::map<std::string, Expr>& ann, std::optional<SpanT> s) {
    return For(v, mn, ext, ParseForKind(kind), body, ann, ToSpan(s));
  });
  m.def(
      "if_",
      [](const Expr& c, const Stmt& t, std::shared_ptr<const StmtNode> e, std::optional<SpanT> s) {
        return If(c, t, e, ToSpan(s));
      },
      "cond"_a, "then_case"_a, "else_case"_a.none(), "span"_a.none());
  m.def("while_",
        [](const Expr& c, const Stmt& body, std::optional<SpanT> s) { return While(c, body, ToSpan(s)); });
  m.def("seq", [](const std::vector<Stmt>& v, std::optional<SpanT> s) { return Seq(v, ToSpan(s)); });
  m.def("kernel",
        [](const std::vector<Expr>& grid, const std::vector<Var>& bv, const std::vector<Expr>& threads,
           const std::vector<Buffer>& allocs, const std::vector<std::pair<Buffer, Expr>>& inits,
           const Stmt& body, std::optional<SpanT> s) {
          return Stmt(std::make_shared<KernelNode>(grid, bv, threads, allocs, inits, body, ToSpan(s)));
        });
  // Every tile op, by its DSL name (each op registers its factory in src/op/<op>.cc).
  m.def(
      "tile_op",
      [](const std::string& name, const std::vector<Region>& regions, const std::vector<Expr>& exprs,
         const std::map<std::string, int64_t>& attrs,
         std::optional<SpanT> s) { return MakeTileOp(name, regions, exprs, attrs, ToSpan(s)); },
      "name"_a, "regions"_a, "exprs"_a, "attrs"_a, "span"_a.none());
  m.def("tile_op_names", &TileOpNames);
  m.def("prim_func",
        [](const std::string& name,
           const std::vector<std::pair<Var, std::shared_ptr<const BufferNode>>>& params, const Stmt& body,
           const std::map<std::string, std::string>& attrs, std::optional<SpanT> s) {
          std::vector<Param> ps;
          for (auto& p : params) ps.push_back({p.first, p.second});
          PrimFunc f = MakePrimFunc(name, ps, body, attrs, ToSpan(s));
          CheckExprDepth(f);  // before anything walks it recursively
          return f;
        });

  // ---- analyses --------------------------------------------------------------------------------
  nb::class_<Target>(m, "Target")
      .def_ro("kind", &Target::kind)
      .def_ro("arch", &Target::arch)
      .def_ro("arch_given", &Target::arch_given)
      .def_ro("features", &Target::features)
      .def_ro("features_given", &Target::features_given)
      .def_ro("smem_limit", &Target::smem_limit)
      .def_ro("max_threads", &Target::max_threads)
      .def_ro("max_registers", &Target::max_registers)
      .def_ro("warp_size", &Target::warp_size)
      .def("__str__", &Target::str);
  m.def("parse_target", &ParseTarget);
  m.def("register_source", &RegisterSource);
  m.def("format_span", [](const SpanT& s) { return FormatSpan(ToSpan(s)); });
  m.def("print_func", &PrintPrimFunc);
  m.def("print_expr", &PrintExpr);
  m.def("print_stmt", [](const Stmt& s) { return PrintStmt(s); });
  m.def("structural_equal", [](const PrimFunc& a, const PrimFunc& b) { return StructuralEqual(a, b); });
  m.def(
      "structural_equal_expr",
      [](const Expr& a, const Expr& b, bool map_free) { return StructuralEqual(a, b, map_free); }, "a"_a,
      "b"_a, "map_free_vars"_a = false);
  m.def("structural_hash", [](const PrimFunc& f) { return StructuralHash(f); });
  m.def("split_kernels", &SplitKernels);
  m.def("hoist_workspaces", &HoistWorkspaces);
  m.def("work_of", [](const PrimFunc& f) {
    Work w = WorkOf(f);
    return std::make_tuple(w.flops, w.global_bytes, w.blocks, w.unknown);
  });
  // The source locations of a function's statements (FNV-1a over file, line and column): two
  // structurally equal functions from different places report their diagnostics at different lines.
  m.def("span_hash", [](const PrimFunc& f) {
    uint64_t h = 1469598103934665603ull;
    auto mix = [&h](const std::string& s) {
      for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
      h = (h ^ 0xffu) * 1099511628211ull;
    };
    mix(f->span.defined() ? f->span.file + ":" + std::to_string(f->span.line) : "");
    PostOrderVisitStmt(f->body, [&](const Stmt& s) {
      if (s->span.defined())
        mix(s->span.file + ":" + std::to_string(s->span.line) + ":" + std::to_string(s->span.col));
    });
    return h;
  });
  m.def(
      "structural_hash_expr", [](const Expr& e, bool map_free) { return StructuralHash(e, map_free); }, "e"_a,
      "map_free_vars"_a = false);
  m.def(
      "simplify_expr",
      [](const Expr& e, const std::vector<std::tuple<Var, int64_t, int64_t>>& bounds) {
        BoundMap bm;
        for (auto& b : bounds) bm[std::get<0>(b).get()] = {std::get<1>(b), std::get<2>(b)};
        return Simplify(e, bm);
      },
      "e"_a, "bounds"_a = std::vector<std::tuple<Var, int64_t, int64_t>>{});
  m.def("simplify_func", [](const PrimFunc& f) { return Simplify(f); });
  // ---- CPU backend -----------------------------------------------------------------------------
  nb::class_<TensorArg>(m, "TensorArg")
      .def(nb::init<>())
      .def_rw("data", &TensorArg::data)
      .def_rw("dtype", &TensorArg::dtype)
      .def_rw("shape", &TensorArg::shape)
      .def_rw("strides", &TensorArg::strides)
      .def_rw("device", &TensorArg::device)
      .def_rw("is_tensor", &TensorArg::is_tensor)
      .def_rw("scalar", &TensorArg::scalar);
  m.def("make_tensor_arg", [](uintptr_t data, const std::string& dtype, const std::vector<int64_t>& shape,
                              const std::vector<int64_t>& strides, const std::string& device) {
    TensorArg a;
    a.data = reinterpret_cast<void*>(data);
    a.dtype = dtype;
    a.shape = shape;
    a.strides = strides;
    a.device = device;
    return a;
  });
  m.def("make_scalar_arg", [](double v) {
    TensorArg a;
    a.is_tensor = false;
    a.scalar = v;
    return a;
  });
  // An integer scalar, exactly: `bits` is its two's-complement int64 (a uint64 above 2^63 - 1 is
  // passed as v - 2^64 with is_unsigned set).
  m.def(
      "make_int_scalar_arg",
      [](int64_t bits, bool is_unsigned) {
        TensorArg a;
        a.is_tensor = false;
        a.scalar_is_int = true;
        a.scalar_unsigned = is_unsigned;
        a.scalar_int = bits;
        return a;
      },
      "bits"_a, "is_unsigned"_a = false);
  BindCompile(m);  // compiling, loading and the backends (bind_compile.cc)
  // Fragment layouts as (thread, local) tables, for plots and tests.
  auto make_fragment = [](const std::string& kind, const std::vector<int64_t>& p) {
    if (kind == "mma_C") return MmaAccumulator(p.at(0), p.at(1), p.at(2), p.at(3));
    if (kind == "mma_rows") return MmaRows(p.at(0), p.at(1), p.at(2));
    if (kind == "mma_A") return MmaOperandA(p.at(0), p.at(1), p.at(2), p.at(3));  // M, K, wm, wn
    if (kind == "mma_B") return MmaOperandB(p.at(0), p.at(1), p.at(3), p.at(4) != 0, p.at(2));  // K, N, wm, wn, trans
    if (kind == "mma_A8") return ByteSplitFragment(MmaOperandA(p.at(0), p.at(1) / 2, p.at(2), p.at(3)), 1);
    if (kind == "mma_B8")  // K (8-bit elements), N, wm, wn, trans
      return ByteSplitFragment(MmaOperandB(p.at(0) / 2, p.at(1), p.at(3), p.at(4) != 0, p.at(2)), p.at(4) ? 1 : 0);
    if (kind == "mma_A_tf32") return MmaOperandATf32(p.at(0), p.at(1), p.at(2), p.at(3));  // M, K, wm, wn
    if (kind == "mma_B_tf32") return MmaOperandBTf32(p.at(0), p.at(1), p.at(2), p.at(3), p.at(4) != 0);
    if (kind == "striped" && p.size() >= 3)  // shape..., threads, vec
      return Striped(std::vector<int64_t>(p.begin(), p.end() - 2), p[p.size() - 2], p.back());
    if (kind == "replicated" && p.size() >= 2)  // shape..., threads
      return Replicated(std::vector<int64_t>(p.begin(), p.end() - 1), p.back());
    throw UserError(ErrorKind::kArgument,
                    "unknown fragment kind '" + kind +
                        "' (mma_C, mma_rows, mma_A, mma_B, mma_A8, mma_B8, mma_A_tf32, mma_B_tf32, striped, replicated)");
  };
  m.def("fragment_table", [make_fragment](const std::string& kind, const std::vector<int64_t>& p) {
    Fragment f = make_fragment(kind, p);
    return std::make_tuple(f.shape, f.Table(), f.desc);
  });
  // The layout as the IR value LayoutInference records (T.attr(buf, "tl.layout", value)).
  m.def("fragment_value",
        [make_fragment](const std::string& kind, const std::vector<int64_t>& p, const std::string& origin) {
          Fragment f = make_fragment(kind, p);
          f.origin = origin;
          return FragmentToExpr(f);
        });
  m.def("swizzled_offset", &SwizzledOffsetInt);
  // T.annotate_layout's user layouts, traced by the front end over placeholder vars and checked here
  // (src/layout/user_layout.h): the IR values of the attr "tl.user_layout".
  m.def("user_fragment_value", [](const std::string& buffer, const std::vector<int64_t>& shape,
                                  const std::vector<Var>& vars, std::optional<Var> rep, int64_t replicate,
                                  const Expr& thread, std::optional<Expr> local, std::optional<SpanT> s) {
    Fragment f = MakeUserFragment(buffer, shape, vars, rep ? *rep : Var(), replicate, thread,
                                  local ? *local : Expr(), ToSpan(s));
    return FragmentToExpr(f);
  });
  m.def("shared_layout_value",
        [](const std::string& buffer, const std::vector<int64_t>& shape, const std::vector<Var>& vars,
           const std::vector<Expr>& phys, std::optional<SpanT> s) {
          return SharedLayoutToExpr(MakeSharedLayout(buffer, shape, vars, phys, ToSpan(s)));
        });
  m.def("mfma_half_swap_offset", &MfmaHalfSwapOffsetInt);
  m.def("mfma_k_rows_offset", &MfmaKRowsOffsetInt);
  BindOpenCL(m);  // OpenCL backend (bindings_opencl.cc)

  m.def("const_int", [](const Expr& e) -> std::optional<int64_t> {
    int64_t v;
    if (AsConstInt(e, &v)) return v;
    return std::nullopt;
  });
}

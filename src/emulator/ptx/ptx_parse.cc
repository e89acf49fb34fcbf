// PTX text to the decoded module of ptx_internal.h: statements, declarations (.reg, .shared, .local,
// .param), labels, and instructions with their opcode modifiers decoded (PTX ISA, "Instruction Set").
// Whatever is not understood is an error naming the PTX line, never skipped.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <functional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "emulator/ptx/ptx_internal.h"
#include "support/error.h"

namespace tl::emu::ptx {

const char* TyName(Ty t) {
  static const char* names[] = {"none", "b8",  "b16",   "b32", "b64",    "b128", "u8",  "u16",  "u32",
                                "u64",  "s8",  "s16",   "s32", "s64",    "f16",  "f16x2", "bf16", "bf16x2",
                                "f32",  "f64", "pred",  "tf32", "e4m3", "e5m2", "e4m3x2", "e5m2x2"};
  return names[static_cast<int>(t)];
}

namespace {

const std::unordered_map<std::string, Ty>& TypeNames() {
  static const std::unordered_map<std::string, Ty> m = {
      {"b8", Ty::kB8},         {"b16", Ty::kB16},   {"b32", Ty::kB32},     {"b64", Ty::kB64},
      {"b128", Ty::kB128},     {"u8", Ty::kU8},     {"u16", Ty::kU16},     {"u32", Ty::kU32},
      {"u64", Ty::kU64},       {"s8", Ty::kS8},     {"s16", Ty::kS16},     {"s32", Ty::kS32},
      {"s64", Ty::kS64},       {"f16", Ty::kF16},   {"f16x2", Ty::kF16x2}, {"bf16", Ty::kBF16},
      {"bf16x2", Ty::kBF16x2}, {"f32", Ty::kF32},   {"f64", Ty::kF64},     {"pred", Ty::kPred},
      {"tf32", Ty::kTf32},     {"e4m3", Ty::kE4M3}, {"e5m2", Ty::kE5M2},   {"e4m3x2", Ty::kE4M3x2},
      {"e5m2x2", Ty::kE5M2x2}, {"e2m1", Ty::kE2M1}, {"ue4m3", Ty::kUE4M3}, {"ue8m0", Ty::kUE8M0},
      {"e2m3", Ty::kE2M3},     {"e3m2", Ty::kE3M2}};
  return m;
}

// a table:
// clang-format off
const std::unordered_map<std::string, Op>& OpNames() {
  static const std::unordered_map<std::string, Op> m = {
      {"mov", Op::kMov},         {"ld", Op::kLd},           {"st", Op::kSt},         {"cvta", Op::kCvta},
      {"cvt", Op::kCvt},         {"add", Op::kAdd},         {"sub", Op::kSub},       {"mul", Op::kMul},
      {"mad", Op::kMad},         {"fma", Op::kFma},         {"div", Op::kDiv},       {"rem", Op::kRem},
      {"abs", Op::kAbs},         {"neg", Op::kNeg},         {"min", Op::kMin},       {"max", Op::kMax},
      {"and", Op::kAnd},         {"or", Op::kOr},           {"xor", Op::kXor},       {"not", Op::kNot},
      {"cnot", Op::kCnot},       {"shl", Op::kShl},         {"shr", Op::kShr},       {"setp", Op::kSetp},
      {"selp", Op::kSelp},       {"bra", Op::kBra},         {"ret", Op::kRet},       {"exit", Op::kExit},
      {"bar", Op::kBar},         {"barrier", Op::kBar},     {"cp", Op::kCpAsync},    {"ldmatrix", Op::kLdmatrix},
      {"mma", Op::kMma},         {"shfl", Op::kShfl},       {"vote", Op::kVote},     {"ex2", Op::kEx2},
      {"lg2", Op::kLg2},         {"rcp", Op::kRcp},         {"sqrt", Op::kSqrt},     {"rsqrt", Op::kRsqrt},
      {"sin", Op::kSin},         {"cos", Op::kCos},         {"tanh", Op::kTanh},     {"atom", Op::kAtom},
      {"red", Op::kRed},         {"membar", Op::kFence},    {"fence", Op::kFence},   {"popc", Op::kPopc},
      {"clz", Op::kClz},         {"brev", Op::kBrev},       {"bfe", Op::kBfe},       {"bfi", Op::kBfi},
      {"prmt", Op::kPrmt},       {"shf", Op::kShf},         {"lop3", Op::kLop3},       {"copysign", Op::kCopysign}, {"testp", Op::kTestp},
      {"activemask", Op::kActivemask}, {"dp4a", Op::kDp4a}, {"trap", Op::kTrap}, {"call", Op::kCall},
      {"addc", Op::kAdd}, {"subc", Op::kSub}, {"madc", Op::kMad}};
  return m;
}
// clang-format on

const std::unordered_map<std::string, Sreg>& SregNames() {
  static const std::unordered_map<std::string, Sreg> m = {{"%tid.x", Sreg::kTidX},
                                                          {"%tid.y", Sreg::kTidY},
                                                          {"%tid.z", Sreg::kTidZ},
                                                          {"%ntid.x", Sreg::kNtidX},
                                                          {"%ntid.y", Sreg::kNtidY},
                                                          {"%ntid.z", Sreg::kNtidZ},
                                                          {"%ctaid.x", Sreg::kCtaidX},
                                                          {"%ctaid.y", Sreg::kCtaidY},
                                                          {"%ctaid.z", Sreg::kCtaidZ},
                                                          {"%nctaid.x", Sreg::kNctaidX},
                                                          {"%nctaid.y", Sreg::kNctaidY},
                                                          {"%nctaid.z", Sreg::kNctaidZ},
                                                          {"%laneid", Sreg::kLaneid},
                                                          {"%warpid", Sreg::kWarpid},
                                                          {"%nwarpid", Sreg::kNwarpid},
                                                          {"%smid", Sreg::kSmid},
                                                          {"%clock", Sreg::kClock},
                                                          {"%clock64", Sreg::kClock64},
                                                          {"%lanemask_eq", Sreg::kLanemaskEq},
                                                          {"%lanemask_lt", Sreg::kLanemaskLt},
                                                          {"%lanemask_le", Sreg::kLanemaskLe},
                                                          {"%lanemask_gt", Sreg::kLanemaskGt},
                                                          {"%lanemask_ge", Sreg::kLanemaskGe},
                                                          {"%dynamic_smem_size", Sreg::kDynSmem},
                                                          {"%total_smem_size", Sreg::kTotalSmem},
                                                          {"%globaltimer", Sreg::kGlobalTimer},
                                                          {"%envreg1", Sreg::kEnvreg1},
                                                          {"%envreg2", Sreg::kEnvreg2},
                                                          {"%cluster_ctarank", Sreg::kClusterCtarank},
                                                          {"%cluster_nctarank", Sreg::kClusterNctarank},
                                                          {"%cluster_ctaid.x", Sreg::kClusterCtaidX},
                                                          {"%cluster_ctaid.y", Sreg::kClusterCtaidY},
                                                          {"%cluster_ctaid.z", Sreg::kClusterCtaidZ},
                                                          {"%cluster_nctaid.x", Sreg::kClusterNctaidX},
                                                          {"%cluster_nctaid.y", Sreg::kClusterNctaidY},
                                                          {"%cluster_nctaid.z", Sreg::kClusterNctaidZ},
                                                          {"%clusterid.x", Sreg::kClusteridX},
                                                          {"%clusterid.y", Sreg::kClusteridY},
                                                          {"%clusterid.z", Sreg::kClusteridZ},
                                                          {"%nclusterid.x", Sreg::kNclusteridX},
                                                          {"%nclusterid.y", Sreg::kNclusteridY},
                                                          {"%nclusterid.z", Sreg::kNclusteridZ},
                                                          {"%is_explicit_cluster", Sreg::kIsExplicitCluster}};
  return m;
}

const std::unordered_map<std::string, Cmp>& CmpNames() {
  static const std::unordered_map<std::string, Cmp> m = {
      {"eq", Cmp::kEq},   {"ne", Cmp::kNe},   {"lt", Cmp::kLt},   {"le", Cmp::kLe},   {"gt", Cmp::kGt},
      {"ge", Cmp::kGe},   {"lo", Cmp::kLo},   {"ls", Cmp::kLs},   {"hi", Cmp::kHi},   {"hs", Cmp::kHs},
      {"equ", Cmp::kEqu}, {"neu", Cmp::kNeu}, {"ltu", Cmp::kLtu}, {"leu", Cmp::kLeu}, {"gtu", Cmp::kGtu},
      {"geu", Cmp::kGeu}, {"num", Cmp::kNum}, {"nan", Cmp::kNan}};
  return m;
}

const std::unordered_map<std::string, Rnd>& RndNames() {
  static const std::unordered_map<std::string, Rnd> m = {
      {"rn", Rnd::kRn},   {"rz", Rnd::kRz},   {"rm", Rnd::kRm},   {"rp", Rnd::kRp},  {"rni", Rnd::kRni},
      {"rzi", Rnd::kRzi}, {"rmi", Rnd::kRmi}, {"rpi", Rnd::kRpi}, {"rna", Rnd::kRna}};
  return m;
}

// Modifiers that change nothing the emulator models (cache and eviction hints, scopes, memory orders and
// the `.sync`/`.aligned` markers, which the executor checks by other means).
const std::set<std::string>& IgnoredModifiers() {
  static const std::set<std::string> s = {
      "sync",    "aligned", "uni",       "cta",    "gpu",       "sys",     "relaxed", "acquire", "release",
      "acq_rel", "weak",    "volatile",  "ca",     "cg",        "cs",      "lu",      "cv",      "wb",
      "wt",      "nc",      "L1::no_allocate", "L1::evict_last", "L1::evict_first", "L1::evict_normal",
      "L2::64B", "L2::128B", "L2::256B", "L2::cache_hint", "L1::evict_unchanged", "L2::evict_first",
      "L2::evict_last", "L2::evict_normal", "sc", "shared::cta", "noftz", "full", "row", "col", "x1", "x2",
      "x4", "m8n8", "trans"};
  return s;
}

[[noreturn]] void Fail(int line, const std::string& text, const std::string& why) {
  std::ostringstream os;
  os << "PTX emulator: line " << line << ": " << why;
  if (!text.empty()) os << "\n  " << text;
  throw UserError(ErrorKind::kUnsupported, os.str());
}

std::string Trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

std::vector<std::string> SplitDots(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == '.') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

// Splits at top-level commas (not inside {} or []).
std::vector<std::string> SplitOperands(const std::string& s) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(Trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!Trim(cur).empty()) out.push_back(Trim(cur));
  return out;
}

bool ParseInt(const std::string& s, int64_t* v) {
  if (s.empty()) return false;
  size_t i = 0;
  bool neg = false;
  if (s[0] == '-' || s[0] == '+') {
    neg = s[0] == '-';
    i = 1;
  }
  if (i >= s.size()) return false;
  uint64_t x = 0;
  std::string body = s.substr(i);
  if (!body.empty() && (body.back() == 'U' || body.back() == 'u')) body.pop_back();
  if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) {
    for (size_t j = 2; j < body.size(); ++j) {
      char c = static_cast<char>(std::tolower(static_cast<unsigned char>(body[j])));
      if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
      x = x * 16 + static_cast<uint64_t>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : c - 'a' + 10);
    }
  } else {
    for (char c : body) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
      x = x * 10 + static_cast<uint64_t>(c - '0');
    }
  }
  *v = neg ? -static_cast<int64_t>(x) : static_cast<int64_t>(x);
  return true;
}

class Parser {
 public:
  explicit Parser(Module* m) : m_(m) {}

  void Run(const std::string& src) {
    std::string text = StripComments(src);
    size_t i = 0;
    int line = 1;
    auto skip_ws = [&] {
      while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) {
        if (text[i] == '\n') ++line;
        ++i;
      }
    };
    while (true) {
      skip_ws();
      if (i >= text.size()) break;
      const int start_line = line;
      char c = text[i];
      if (c == '{') {
        if (!kernel_) Fail(line, "", "'{' outside a function body");
        scopes_.emplace_back();
        reg_scopes_.resize(scopes_.size());
        label_scopes_.resize(scopes_.size());
        ++i;
        continue;
      }
      if (c == '}') {
        if (scopes_.empty()) Fail(line, "", "unbalanced '}'");
        CloseLabelScope();
        scopes_.pop_back();
        reg_scopes_.resize(scopes_.size());
        label_scopes_.resize(scopes_.size());
        ++i;
        if (scopes_.empty()) FinishKernel();
        continue;
      }
      // a label: `name:` (not `::`), a statement of its own
      {
        size_t j = i;
        while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_' ||
                                   text[j] == '$' || text[j] == '%'))
          ++j;
        if (j > i && j < text.size() && text[j] == ':' && (j + 1 >= text.size() || text[j + 1] != ':')) {
          Statement(text.substr(i, j - i + 1), start_line);
          i = j + 1;
          continue;
        }
      }
      // debug sections (with -lineinfo): `.section name { ... }`, skipped whole
      if (text.compare(i, 8, ".section") == 0) {
        size_t open = text.find('{', i), close = open == std::string::npos ? open : text.find('}', open);
        if (close == std::string::npos) Fail(line, "", "unterminated .section");
        for (size_t j = i; j < close; ++j) line += text[j] == '\n';
        i = close + 1;
        continue;
      }
      // directives that end at the end of their line (no ';')
      static const char* kLineDirectives[] = {".version", ".target", ".address_size", ".loc", ".file"};
      bool line_directive = false;
      for (const char* d : kLineDirectives)
        if (text.compare(i, std::strlen(d), d) == 0 && i + std::strlen(d) < text.size() &&
            std::isspace(static_cast<unsigned char>(text[i + std::strlen(d)])))
          line_directive = true;
      if (line_directive) {
        size_t e = text.find('\n', i);
        if (e == std::string::npos) e = text.size();
        std::string st = Trim(text.substr(i, e - i));
        if (!st.empty() && st.back() == ';') st.pop_back();
        i = e;
        Statement(st, start_line);
        continue;
      }
      // a statement: up to ';' (braces inside it are vector operands or initialisers), or, for a function
      // header, up to the '{' that opens its body
      std::string st;
      int depth = 0;
      bool header = false;
      while (i < text.size()) {
        char d = text[i];
        if (d == '\n') ++line;
        if (d == '{' && depth == 0 && (header || IsHeader(st))) {
          header = true;
          break;
        }
        if (d == '{' || d == '[' || d == '(') ++depth;
        if (d == '}' || d == ']' || d == ')') --depth;
        ++i;
        if (d == ';' && depth == 0) break;
        st += d;
      }
      st = Trim(st);
      if (header) {
        BeginFunction(st, start_line);
        continue;  // the '{' is read as the body's scope
      }
      Statement(st, start_line);
    }
    if (kernel_) Fail(line, "", "unterminated function body");
    for (Kernel& k : m_->kernels)
      if (!k.is_func) InlineCalls(&k);
  }

  // ld.param / st.param of a call sequence's own .param variables: per-thread storage (see Directive).
  void ParamToLocal(Instr* in) const {
    if ((in->op != Op::kLd && in->op != Op::kSt) || in->space != Space::kParam) return;
    for (const Operand& o : in->ops)
      if (o.kind == Operand::kAddr && o.sym >= 0 &&
          m_->symbols[static_cast<size_t>(o.sym)].space == Space::kLocal)
        in->space = Space::kLocal;
  }

  // Device functions run inlined: each call of a .func of the module becomes a copy of its body, with its
  // registers appended to the caller's, its .local variables (and its own call sequences' .param variables)
  // placed after the caller's local bytes, its formal parameters and results read and written in the call
  // sequence's .param variables, and its `ret` a branch to the instruction after the call. Calls of
  // functions without a body (vprintf) stay, for the executor.
  void InlineCalls(Kernel* k) {
    int inlined = 0;
    for (size_t i = 0; i < k->code.size();) {
      const Instr& call = k->code[i];
      const Kernel* f = nullptr;
      if (call.op == Op::kCall)
        for (const Kernel& c : m_->kernels)
          if (c.is_func && c.name == call.callee) f = &c;
      if (!f) {
        ++i;
        continue;
      }
      if (++inlined > 4096)
        Fail(
            call.line, call.text,
            "device function '" + f->name +
                "' is recursive (or calls nest past 4096 copies); the PTX emulator inlines device functions");
      const std::vector<Operand>& rets = call.ops[0].vec;
      const std::vector<Operand>& args = call.ops[1].vec;
      if (rets.size() != f->rets.size() || args.size() != f->params.size())
        Fail(call.line, call.text,
             "call of '" + f->name + "' with " + std::to_string(args.size()) + " arguments and " +
                 std::to_string(rets.size()) + " results; it declares " + std::to_string(f->params.size()) +
                 " and " + std::to_string(f->rets.size()));
      std::unordered_map<int, int> sym_map;  // callee symbol -> the caller's
      for (size_t j = 0; j < args.size(); ++j) sym_map[f->params[j]] = args[j].sym;
      for (size_t j = 0; j < rets.size(); ++j) sym_map[f->rets[j]] = rets[j].sym;
      const int64_t local_base = (k->local_bytes + 15) / 16 * 16;
      auto map_sym = [&](int sym) {
        if (sym < 0) return sym;
        if (auto it = sym_map.find(sym); it != sym_map.end()) return it->second;
        const Symbol& s = m_->symbols[static_cast<size_t>(sym)];
        if (s.space != Space::kLocal) return sym;  // shared, global: the module's
        Symbol copy = s;
        copy.offset += local_base;
        m_->symbols.push_back(copy);
        return sym_map[sym] = static_cast<int>(m_->symbols.size()) - 1;
      };
      const int reg_base = static_cast<int>(k->reg_types.size());
      std::function<void(Operand&)> map_op = [&](Operand& o) {
        if (o.reg >= 0) o.reg += reg_base;
        if (o.pred_out >= 0) o.pred_out += reg_base;
        o.sym = map_sym(o.sym);
        for (Operand& e : o.vec) map_op(e);
      };
      const int n = static_cast<int>(f->code.size());
      const int at = static_cast<int>(i);
      std::vector<Instr> body = f->code;
      for (Instr& in : body) {
        for (Operand& o : in.ops) map_op(o);
        if (in.guard >= 0) in.guard += reg_base;
        ParamToLocal(&in);
        if (in.op == Op::kRet) {  // back to the caller: the instruction after the call
          in.op = Op::kBra;
          in.ops.clear();
          in.target = n;
        }
        if (in.op == Op::kBra) in.target += at;
      }
      for (Instr& in : k->code)
        if (in.op == Op::kBra && in.target > at) in.target += n - 1;
      k->reg_types.insert(k->reg_types.end(), f->reg_types.begin(), f->reg_types.end());
      k->local_bytes = local_base + f->local_bytes;
      k->code.erase(k->code.begin() + at);
      k->code.insert(k->code.begin() + at, body.begin(), body.end());
      // i stays: the copy's own calls are inlined next
    }
  }

 private:
  static std::string StripComments(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '/' && i + 1 < s.size() && s[i + 1] == '/') {
        while (i < s.size() && s[i] != '\n') ++i;
        if (i < s.size()) out += '\n';
      } else if (s[i] == '/' && i + 1 < s.size() && s[i + 1] == '*') {
        i += 2;
        while (i + 1 < s.size() && !(s[i] == '*' && s[i + 1] == '/')) {
          if (s[i] == '\n') out += '\n';
          ++i;
        }
        ++i;
      } else if (s[i] == '"') {  // strings (.file names, .pragma) kept whole
        out += s[i++];
        while (i < s.size() && s[i] != '"') out += s[i++];
        if (i < s.size()) out += s[i];
      } else {
        out += s[i];
      }
    }
    return out;
  }

  static bool IsHeader(const std::string& st) {
    return st.find(".entry") != std::string::npos || st.find(".func") != std::string::npos;
  }

  void BeginFunction(const std::string& st, int line) {
    // `.entry name (params) directives` or `.func (returns) name (params)` (the return list is optional)
    const bool func = st.find(".entry") == std::string::npos;
    const size_t p = st.find(func ? ".func" : ".entry") + (func ? 5 : 6);
    std::string after = Trim(st.substr(p));
    std::string rets;
    if (func && !after.empty() && after[0] == '(') {
      size_t close = after.find(')');
      if (close == std::string::npos) Fail(line, st, "unterminated return list");
      rets = after.substr(1, close - 1);
      after = Trim(after.substr(close + 1));
    }
    const size_t open = after.find('(');
    const size_t close = open == std::string::npos ? std::string::npos : after.find(')', open);
    m_->kernels.emplace_back();
    kernel_ = &m_->kernels.back();
    kernel_->name = Trim(after.substr(0, open));
    kernel_->is_func = func;
    kernel_line_ = line;
    label_scopes_.clear();
    fixups_.clear();
    auto declare = [&](const std::string& list, std::vector<int>* out) {
      for (const std::string& decl : SplitOperands(list)) {
        if (decl.empty()) continue;
        Symbol s = DeclSymbol(decl, line, Space::kParam);
        int64_t align = std::max<int64_t>(1, std::min<int64_t>(s.bytes, 8));
        if (decl.find(".align") != std::string::npos) align = AlignOf(decl);
        kernel_->param_bytes = (kernel_->param_bytes + align - 1) / align * align;
        s.offset = kernel_->param_bytes;
        kernel_->param_bytes += s.bytes;
        out->push_back(AddSymbol(s));
      }
    };
    declare(rets, &kernel_->rets);
    if (open != std::string::npos) declare(after.substr(open + 1, close - open - 1), &kernel_->params);
    // performance directives after the parameter list
    std::string tail = close == std::string::npos ? "" : after.substr(close + 1);
    size_t r = tail.find(".reqntid");
    if (r != std::string::npos) {
      std::vector<std::string> v = SplitOperands(tail.substr(r + 8));
      for (size_t d = 0; d < v.size() && d < 3; ++d) ParseInt(Trim(v[d]), &kernel_->reqntid[d]);
    }
    if (size_t c = tail.find(".reqnctapercluster"); c != std::string::npos) ClusterDims(tail.substr(c + 18));
    if (tail.find(".explicitcluster") != std::string::npos) kernel_->explicit_cluster = true;
  }

  void ClusterDims(const std::string& text) {
    std::vector<std::string> v = SplitOperands(text);
    for (size_t d = 0; d < v.size() && d < 3; ++d) {
      std::string x = Trim(v[d]);
      while (!x.empty() && (x.back() == ';' || x.back() == ' ')) x.pop_back();
      ParseInt(x, &kernel_->cluster[d]);
    }
    kernel_->explicit_cluster = true;
  }

  static int64_t AlignOf(const std::string& decl) {
    size_t a = decl.find(".align");
    if (a == std::string::npos) return 1;
    std::istringstream is(decl.substr(a + 6));
    int64_t v = 1;
    is >> v;
    return v;
  }

  // `.space .align N .type name[count]` (or a parameter `.param .u64 name`): its size in bytes
  Symbol DeclSymbol(const std::string& decl, int line, Space space) {
    Symbol s;
    s.space = space;
    std::istringstream is(decl);
    std::string tok;
    Ty t = Ty::kNone;
    std::string name;
    while (is >> tok) {
      if (tok[0] == '.') {
        auto it = TypeNames().find(tok.substr(1));
        if (it != TypeNames().end()) t = it->second;
        if (tok == ".align") is >> tok;  // its value
        if (tok == ".ptr") continue;
        continue;
      }
      name += tok;  // `name[count]` possibly split by spaces
    }
    size_t br = name.find('[');
    int64_t count = 1;
    if (br != std::string::npos) {
      std::string inner = name.substr(br + 1, name.find(']') - br - 1);
      if (inner.empty()) {
        count = 0;
        s.external = true;
      } else if (!ParseInt(Trim(inner), &count)) {
        Fail(line, decl, "array size '" + inner + "' is not an integer");
      }
      name = name.substr(0, br);
    }
    size_t eq = name.find('=');
    if (eq != std::string::npos) Fail(line, decl, "initialised variables are not supported by the PTX emulator");
    if (t == Ty::kNone) Fail(line, decl, "declaration without a type");
    s.name = Trim(name);
    s.count = count;
    s.bytes = count * std::max(1, TyBits(t) / 8);
    return s;
  }

  int AddSymbol(const Symbol& s) {
    m_->symbols.push_back(s);
    int id = static_cast<int>(m_->symbols.size()) - 1;
    sym_index_[s.name] = id;
    return id;
  }

  // Labels are scoped as registers are (inline-asm blocks reuse names): at the end of a scope, its branches
  // to its own labels are resolved; the others are looked up in the enclosing scope.
  void CloseLabelScope() {
    const size_t depth = scopes_.size();
    std::vector<Fixup> keep;
    for (Fixup& f : fixups_) {
      if (f.depth != depth) {
        keep.push_back(f);
        continue;
      }
      auto it = label_scopes_[depth - 1].find(f.label);
      if (it != label_scopes_[depth - 1].end()) {
        kernel_->code[static_cast<size_t>(f.idx)].target = it->second;
      } else if (depth == 1) {
        Fail(kernel_->code[static_cast<size_t>(f.idx)].line, f.label, "branch to an undefined label");
      } else {
        f.depth = depth - 1;
        keep.push_back(f);
      }
    }
    fixups_ = std::move(keep);
  }

  void FinishKernel() {
    kernel_ = nullptr;
    reg_scopes_.clear();
  }

  void Statement(std::string st, int line) {
    if (st.empty()) return;
    // labels
    while (true) {
      size_t colon = st.find(':');
      if (colon == std::string::npos) break;
      std::string lab = Trim(st.substr(0, colon));
      bool ident = !lab.empty() && lab.find_first_of(" \t.[{%@") == std::string::npos;
      if (!ident || (colon + 1 < st.size() && st[colon + 1] == ':')) break;
      if (!kernel_ || label_scopes_.empty()) Fail(line, st, "label outside a function");
      label_scopes_.back()[lab] = static_cast<int>(kernel_->code.size());
      st = Trim(st.substr(colon + 1));
      if (st.empty()) return;
    }
    if (st[0] == '.') {
      Directive(st, line);
      return;
    }
    if (!kernel_) Fail(line, st, "instruction outside a function");
    Instruction(st, line);
  }

  void Directive(const std::string& st, int line) {
    std::istringstream is(st);
    std::string d;
    is >> d;
    if (d == ".version" || d == ".target" || d == ".address_size" || d == ".pragma" || d == ".maxntid" ||
        d == ".reqntid" || d == ".minnctapersm" || d == ".maxnreg" || d == ".section" ||
        d == ".maxclusterrank")
      return;
    if (d == ".reqnctapercluster" && kernel_) {  // the cluster shape (T.ClusterKernel's __cluster_dims__)
      std::string rest;
      std::getline(is, rest);
      ClusterDims(rest);
      return;
    }
    if (d == ".explicitcluster" && kernel_) {
      kernel_->explicit_cluster = true;
      return;
    }
    if (d == ".file") {
      int idx = 0;
      is >> idx;
      std::string rest;
      std::getline(is, rest);
      size_t a = rest.find('"'), b = rest.rfind('"');
      m_->files[idx] = a != std::string::npos && b > a ? rest.substr(a + 1, b - a - 1) : Trim(rest);
      return;
    }
    if (d == ".loc") {
      is >> loc_file_ >> loc_line_;
      return;
    }
    if (d == ".reg") {
      if (!kernel_) Fail(line, st, ".reg outside a function");
      DeclRegs(st.substr(4), line);
      return;
    }
    std::string rest = st;
    bool external = false, visible = false;
    while (true) {  // linkage
      std::istringstream js(rest);
      std::string first;
      js >> first;
      if (first == ".extern" || first == ".visible" || first == ".weak" || first == ".common") {
        external |= first == ".extern";
        visible = true;
        rest = Trim(rest.substr(rest.find(first) + first.size()));
        continue;
      }
      break;
    }
    (void)visible;
    std::istringstream ks(rest);
    std::string space;
    ks >> space;
    if (space == ".shared") {
      Symbol s = DeclSymbol(rest.substr(7), line, Space::kShared);
      s.external |= external;
      int64_t align = std::max<int64_t>(AlignOf(rest), 1);
      if (s.external) {
        m_->extern_shared_align = std::max(m_->extern_shared_align, align);
        m_->extern_shared.push_back(AddSymbol(s));
      } else {
        m_->static_shared = (m_->static_shared + align - 1) / align * align;
        s.offset = m_->static_shared;
        m_->static_shared += s.bytes;
        AddSymbol(s);
      }
      return;
    }
    if (space == ".func") return;  // a prototype (an external function such as vprintf, or a declaration)
    if (space == ".local" || (space == ".param" && kernel_)) {
      // .local arrays; a function body's own .param variables (a call sequence's arguments and results) are
      // per-thread storage too, and live with the local bytes
      if (!kernel_) Fail(line, st, ".local outside a function");
      Symbol s = DeclSymbol(rest.substr(space.size() + 1), line, Space::kLocal);
      int64_t align = std::max<int64_t>(AlignOf(rest), space == ".param" ? std::min<int64_t>(s.bytes, 8) : 1);
      kernel_->local_bytes = (kernel_->local_bytes + align - 1) / align * align;
      s.offset = kernel_->local_bytes;
      kernel_->local_bytes += s.bytes;
      AddSymbol(s);
      return;
    }
    if (space == ".global" || space == ".const") {  // module storage, zero- or explicitly initialised
      const size_t eq = rest.find('=');
      Symbol s = DeclSymbol(
          rest.substr(space.size() + 1, eq == std::string::npos ? std::string::npos : eq - space.size() - 1),
          line, space == ".global" ? Space::kGlobal : Space::kConst);
      int64_t align = std::max<int64_t>(AlignOf(rest), 8);
      m_->global_bytes = (m_->global_bytes + align - 1) / align * align;
      s.offset = m_->global_bytes;
      m_->global_bytes += std::max<int64_t>(s.bytes, 1);
      m_->global_init.resize(static_cast<size_t>(m_->global_bytes), 0);
      if (eq != std::string::npos) Initialise(s, rest.substr(eq + 1), rest, line);
      AddSymbol(s);
      return;
    }
    Fail(line, st, "directive " + d + " is not supported by the PTX emulator");
  }

  // `= value` or `= {v0, v1, ...}` of a module variable: integers or float bit patterns (0f... / 0d...), each
  // an element of the variable's type, little-endian. Addresses of other variables are refused.
  void Initialise(const Symbol& s, std::string init, const std::string& st, int line) {
    init = Trim(init);
    if (!init.empty() && init[0] == '{') init = init.substr(1, init.rfind('}') - 1);
    const int64_t elem = std::max<int64_t>(1, s.bytes / std::max<int64_t>(1, s.count));
    int64_t at = s.offset;
    for (const std::string& v : SplitOperands(init)) {
      if (at + elem > s.offset + s.bytes) Fail(line, st, "more initialisers than elements");
      uint64_t bits = 0;
      int64_t iv = 0;
      if (v.size() > 2 && v[0] == '0' && (v[1] == 'f' || v[1] == 'F' || v[1] == 'd' || v[1] == 'D')) {
        bits = std::stoull(v.substr(2), nullptr, 16);
      } else if (ParseInt(v, &iv)) {
        bits = static_cast<uint64_t>(iv);
      } else {
        Fail(line, st,
             "initialiser '" + v +
                 "' is not a number (addresses of variables are not supported by the PTX emulator)");
      }
      for (int64_t b = 0; b < elem && b < 8; ++b)
        m_->global_init[static_cast<size_t>(at + b)] = static_cast<uint8_t>(bits >> (8 * b));
      at += elem;
    }
  }

  void DeclRegs(const std::string& decl, int line) {
    std::istringstream is(decl);
    std::string tok;
    Ty t = Ty::kNone;
    std::string names;
    while (is >> tok) {
      if (tok[0] == '.' && TypeNames().count(tok.substr(1))) {
        t = TypeNames().at(tok.substr(1));
      } else if (tok == ".v2" || tok == ".v4") {
        Fail(line, decl, "vector registers are not supported by the PTX emulator");
      } else {
        names += tok + " ";
      }
    }
    if (t == Ty::kNone) Fail(line, decl, ".reg without a type");
    if (reg_scopes_.size() < scopes_.size()) reg_scopes_.resize(scopes_.size());
    auto& scope = reg_scopes_[scopes_.size() - 1];
    for (std::string n : SplitOperands(names)) {
      n = Trim(n);
      size_t lt = n.find('<');
      if (lt != std::string::npos) {
        int64_t count = 0;
        if (!ParseInt(Trim(n.substr(lt + 1, n.find('>') - lt - 1)), &count)) Fail(line, decl, "bad register count");
        std::string base = Trim(n.substr(0, lt));
        for (int64_t j = 0; j < count; ++j) scope[base + std::to_string(j)] = NewReg(t);
      } else {
        scope[n] = NewReg(t);
      }
    }
  }

  int NewReg(Ty t) {
    kernel_->reg_types.push_back(t);
    // a .b128 register takes two 64-bit slots: its low half, then its high half
    if (t == Ty::kB128) kernel_->reg_types.push_back(Ty::kB64);
    return static_cast<int>(kernel_->reg_types.size()) - (t == Ty::kB128 ? 2 : 1);
  }

  int FindReg(const std::string& name) const {
    for (size_t s = std::min(reg_scopes_.size(), scopes_.size()); s-- > 0;) {
      auto it = reg_scopes_[s].find(name);
      if (it != reg_scopes_[s].end()) return it->second;
    }
    return -1;
  }

  Operand ParseOperand(std::string s, const Instr& in) {
    s = Trim(s);
    Operand o;
    if (s.empty()) Fail(in.line, in.text, "empty operand");
    if (s == "_") {
      o.kind = Operand::kSink;
      return o;
    }
    if (s[0] == '{') {
      o.kind = Operand::kVec;
      for (const std::string& e : SplitOperands(s.substr(1, s.rfind('}') - 1))) o.vec.push_back(ParseOperand(e, in));
      return o;
    }
    if (s[0] == '[') {
      o.kind = Operand::kAddr;
      std::string inner = Trim(s.substr(1, s.rfind(']') - 1));
      if (inner.find('{') != std::string::npos) {  // [tensor map, {coordinates}] of cp.async.bulk.tensor
        size_t comma = inner.find(',');
        Operand base = ParseOperand(inner.substr(0, comma), in);
        Operand coords = ParseOperand(inner.substr(comma + 1), in);
        if (base.kind != Operand::kReg || coords.kind != Operand::kVec)
          Fail(in.line, in.text, "expected [tensor-map register, {coordinates}]");
        o.reg = base.reg;
        o.vec = coords.vec;
        return o;
      }
      // base[+-offset]
      size_t plus = inner.find_first_of("+-", 1);
      std::string base = Trim(plus == std::string::npos ? inner : inner.substr(0, plus));
      if (plus != std::string::npos) {
        std::string off = Trim(inner.substr(plus));
        if (off.size() > 1 && off[0] == '+') off = Trim(off.substr(1));
        if (!ParseInt(off, &o.imm)) Fail(in.line, in.text, "address offset '" + off + "' is not an integer");
      }
      int64_t abs_addr;
      if (ParseInt(base, &abs_addr)) {
        o.imm += abs_addr;
      } else if (int r = FindReg(base); r >= 0) {
        o.reg = r;
      } else if (auto it = sym_index_.find(base); it != sym_index_.end()) {
        o.sym = it->second;
      } else {
        Fail(in.line, in.text, "unknown address base '" + base + "'");
      }
      return o;
    }
    if (s[0] == '!') {
      o = ParseOperand(s.substr(1), in);
      o.neg = true;
      return o;
    }
    size_t bar = s.find('|');
    if (bar != std::string::npos) {
      o = ParseOperand(s.substr(0, bar), in);
      Operand p = ParseOperand(s.substr(bar + 1), in);
      if (p.kind != Operand::kReg) Fail(in.line, in.text, "the second destination after '|' must be a predicate");
      o.pred_out = p.reg;
      return o;
    }
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'f' || s[1] == 'F' || s[1] == 'd' || s[1] == 'D')) {
      uint64_t bits = 0;
      for (size_t j = 2; j < s.size(); ++j) {
        char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[j])));
        if (!std::isxdigit(static_cast<unsigned char>(c))) Fail(in.line, in.text, "bad float literal '" + s + "'");
        bits = bits * 16 + static_cast<uint64_t>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : c - 'a' + 10);
      }
      o.kind = (s[1] == 'f' || s[1] == 'F') ? Operand::kImmF32Bits : Operand::kImmF64Bits;
      o.imm = static_cast<int64_t>(bits);
      return o;
    }
    if (ParseInt(s, &o.imm)) {
      o.kind = Operand::kImmInt;
      return o;
    }
    if ((std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '.') &&
        s.find_first_not_of("0123456789.eE+-") == std::string::npos) {
      o.kind = Operand::kImmDouble;
      o.dbl = std::stod(s);
      return o;
    }
    if (auto it = SregNames().find(s); it != SregNames().end()) {
      o.kind = Operand::kSreg;
      o.sreg = it->second;
      return o;
    }
    if (int r = FindReg(s); r >= 0) {
      o.kind = Operand::kReg;
      o.reg = r;
      return o;
    }
    if (auto it = sym_index_.find(s); it != sym_index_.end()) {
      o.kind = Operand::kSym;
      o.sym = it->second;
      return o;
    }
    if (in.op == Op::kBra) {
      o.kind = Operand::kLabel;
      return o;
    }
    Fail(in.line, in.text, "unknown operand '" + s + "'");
  }

  void Instruction(const std::string& st, int line) {
    Instr in;
    in.line = line;
    in.text = st;
    in.loc_file = loc_file_;
    in.loc_line = loc_line_;
    std::string rest = st;
    if (rest[0] == '@') {
      size_t sp = rest.find_first_of(" \t");
      std::string g = rest.substr(1, sp - 1);
      if (!g.empty() && g[0] == '!') {
        in.guard_neg = true;
        g = g.substr(1);
      }
      in.guard = FindReg(g);
      if (in.guard < 0) Fail(line, st, "unknown guard predicate '" + g + "'");
      rest = Trim(rest.substr(sp));
    }
    size_t sp = rest.find_first_of(" \t");
    std::string opcode = sp == std::string::npos ? rest : rest.substr(0, sp);
    std::string operands = sp == std::string::npos ? "" : Trim(rest.substr(sp));
    Decode(opcode, &in);
    if (in.op == Op::kCall) {
      ParseCall(operands, &in);
      kernel_->code.push_back(std::move(in));
      return;
    }
    for (const std::string& o : SplitOperands(operands)) in.ops.push_back(ParseOperand(o, in));
    ParamToLocal(&in);
    if (in.op == Op::kBra) {
      if (in.ops.empty()) Fail(line, st, "bra without a target");
      fixups_.push_back({static_cast<int>(kernel_->code.size()), Trim(operands), scopes_.size()});
    }
    Validate(in);
    kernel_->code.push_back(std::move(in));
  }

  // `call{.uni} (ret, ...), name, (arg, ...)`, `call name, (args)`, `call name` (PTX ISA 9.7.12.5): the
  // results and arguments are .param variables of the call sequence. Indirect calls (through a register,
  // with a prototype or a target list) are refused.
  void ParseCall(const std::string& operands, Instr* in) {
    std::vector<std::string> groups;
    std::string cur;
    int depth = 0;
    for (char c : operands) {
      if (c == '(') ++depth;
      if (c == ')') --depth;
      if (c == ',' && depth == 0) {
        groups.push_back(Trim(cur));
        cur.clear();
      } else {
        cur += c;
      }
    }
    if (!Trim(cur).empty()) groups.push_back(Trim(cur));
    auto list = [&](const std::string& g) {
      Operand v;
      v.kind = Operand::kVec;
      for (const std::string& name : SplitOperands(g.substr(1, g.rfind(')') - 1))) {
        auto it = sym_index_.find(Trim(name));
        if (it == sym_index_.end() || m_->symbols[static_cast<size_t>(it->second)].space != Space::kLocal)
          Fail(in->line, in->text,
               "call operand '" + Trim(name) + "' is not a .param variable of the call sequence");
        Operand o;
        o.kind = Operand::kSym;
        o.sym = it->second;
        v.vec.push_back(o);
      }
      return v;
    };
    size_t at = 0;
    Operand rets, args;
    rets.kind = args.kind = Operand::kVec;
    if (at < groups.size() && !groups[at].empty() && groups[at][0] == '(') rets = list(groups[at++]);
    if (at >= groups.size()) Fail(in->line, in->text, "call without a function");
    in->callee = groups[at++];
    if (at < groups.size() && !groups[at].empty() && groups[at][0] == '(') args = list(groups[at++]);
    if (at < groups.size() || in->callee.empty() || in->callee[0] == '%')
      Fail(in->line, in->text, "indirect calls are not supported by the PTX emulator");
    if (in->guard >= 0) Fail(in->line, in->text, "a predicated call is not supported by the PTX emulator");
    in->ops = {rets, args};
  }

  // Opcode and modifiers (PTX ISA: every instruction's syntax section).
  // The sm_90 instructions with many modifier spellings: mbarrier, TMA (cp.async.bulk.tensor and its bulk
  // groups), wgmma, stmatrix, elect, setmaxnreg. Returns false for other opcodes.
  bool DecodeHopper(const std::vector<std::string>& parts, Instr* in) {
    auto has = [&](const char* m) { return std::find(parts.begin(), parts.end(), m) != parts.end(); };
    auto only = [&](std::initializer_list<const char*> allowed) {
      for (size_t j = 1; j < parts.size(); ++j) {
        bool ok = false;
        for (const char* a : allowed) ok |= parts[j] == a;
        if (!ok) Fail(in->line, in->text, "modifier ." + parts[j] + " of " + parts[0] + " is not supported by the PTX emulator");
      }
    };
    const std::string& op = parts[0];
    if (op == "barrier" && has("cluster")) {  // barrier.cluster.arrive{.release|.relaxed} / .wait{.acquire}
      only({"cluster", "arrive", "wait", "release", "relaxed", "acquire", "aligned"});
      if (has("arrive") == has("wait")) Fail(in->line, in->text, "barrier.cluster is .arrive or .wait");
      in->op = has("arrive") ? Op::kClusterArrive : Op::kClusterWait;
      return true;
    }
    if (op == "clusterlaunchcontrol") {  // PTX ISA "clusterlaunchcontrol" (sm_100)
      if (has("try_cancel")) {
        only({"try_cancel", "async", "shared::cta", "mbarrier::complete_tx::bytes", "multicast::cluster::all",
              "b128"});
        if (!has("shared::cta"))
          Fail(in->line, in->text,
               "clusterlaunchcontrol.try_cancel on generic addresses is not supported by the PTX emulator");
        in->op = Op::kClcTryCancel;
        in->mode = has("multicast::cluster::all") ? 1 : 0;
        return true;
      }
      only({"query_cancel", "is_canceled", "pred", "get_first_ctaid", "get_first_ctaid::x",
            "get_first_ctaid::y", "get_first_ctaid::z", "v4", "b32", "b128"});
      in->op = Op::kClcQuery;
      // mode 0: is_canceled; 1: get_first_ctaid.v4; 2, 3, 4: get_first_ctaid::x / ::y / ::z
      in->mode = has("is_canceled")          ? 0
                 : has("get_first_ctaid")    ? 1
                 : has("get_first_ctaid::x") ? 2
                 : has("get_first_ctaid::y") ? 3
                                             : 4;
      return true;
    }
    if (op == "mapa") {  // mapa.shared::cluster.u32 d, a, rank
      only({"shared::cluster", "u32", "u64"});
      if (!has("shared::cluster"))
        Fail(in->line, in->text,
             "mapa on generic addresses is not supported by the PTX emulator (only .shared::cluster)");
      in->op = Op::kMapa;
      in->t = has("u64") ? Ty::kU64 : Ty::kU32;
      return true;
    }
    if (op == "mbarrier") {
      only({"init", "arrive", "expect_tx", "try_wait", "test_wait", "parity", "shared::cta", "shared", "b64",
            "release", "acquire", "cta", "relaxed", "cluster", "shared::cluster"});
      if (has("shared::cluster") && (!has("arrive") || has("expect_tx")))
        Fail(in->line, in->text, "only mbarrier.arrive takes a .shared::cluster address in the PTX emulator");
      in->cluster_addr = has("shared::cluster");
      in->op = has("init") ? Op::kMbarInit : has("try_wait") || has("test_wait") ? Op::kMbarTryWait
             : has("arrive") ? Op::kMbarArrive : Op::kMbarExpectTx;
      in->expect_tx = has("expect_tx");
      if (in->op == Op::kMbarTryWait && !has("parity"))
        Fail(in->line, in->text, "mbarrier waits on a phase state (not .parity) are not supported by the PTX emulator");
      in->space = Space::kShared;
      return true;
    }
    // cp.reduce.async.bulk.tensor.Nd.global.shared::cta.add.tile.bulk_group
    if (op == "cp" && has("reduce")) {
      for (size_t j = 1; j < parts.size(); ++j)
        if (parts[j] == "min" || parts[j] == "max" || parts[j] == "inc" || parts[j] == "dec" ||
            parts[j] == "and" || parts[j] == "or" || parts[j] == "xor")
          Fail(in->line, in->text,
               "cp.reduce ." + parts[j] + " is not supported by the PTX emulator (it runs .add)");
      only({"reduce", "async", "bulk", "tensor", "1d", "2d", "3d", "4d", "5d", "global", "shared::cta", "add",
            "tile", "bulk_group"});
      if (!has("tensor") || !has("add"))
        Fail(in->line, in->text, "cp.reduce: the emulator runs tensor .add reductions");
      for (const char* d : {"1d", "2d", "3d", "4d", "5d"})
        if (has(d)) in->dims = d[0] - '0';
      in->op = Op::kTmaReduce;
      return true;
    }
    if (op == "cp" && has("async") && has("mbarrier") && has("arrive")) {
      only({"async", "mbarrier", "arrive", "noinc", "shared", "shared::cta", "b64"});
      in->op = Op::kCpAsyncMbarArrive;
      in->mode = has("noinc") ? 1 : 0;
      in->space = Space::kShared;
      return true;
    }
    if (op == "cp" && has("bulk")) {
      if (has("commit_group")) {
        only({"async", "bulk", "commit_group"});
        in->op = Op::kBulkCommit;
        return true;
      }
      if (has("wait_group")) {
        only({"async", "bulk", "wait_group", "read"});
        in->op = Op::kBulkWait;
        return true;
      }
      only({"async", "bulk", "tensor", "1d", "2d", "3d", "4d", "5d", "shared::cluster", "shared::cta",
            "global", "mbarrier::complete_tx::bytes", "bulk_group", "tile", "multicast::cluster",
            "cta_group::2", "tile::gather4", "tile::scatter4"});
      // 1: the ctaMask operand follows the mbarrier; 2: tile::gather4 / tile::scatter4 (2d: a column and four
      // rows)
      in->mode = has("multicast::cluster") ? 1 : has("tile::gather4") || has("tile::scatter4") ? 2 : 0;
      if (in->mode == 2 && !has("2d")) Fail(in->line, in->text, "tile::gather4 / tile::scatter4 are 2d");
      in->pair = has("cta_group::2");                // the mbarrier may be the CTA pair's other block's
      if (!has("tensor")) Fail(in->line, in->text, "non-tensor bulk copies are not supported by the PTX emulator");
      for (const char* d : {"1d", "2d", "3d", "4d", "5d"})
        if (has(d)) in->dims = d[0] - '0';
      in->op = parts.size() > 5 && parts[5] == "global" ? Op::kTmaStore : Op::kTmaLoad;
      return true;
    }
    if (op == "wgmma") {
      if (has("fence") || has("commit_group") || has("wait_group")) {
        only({"fence", "commit_group", "wait_group", "sync", "aligned"});
        in->op = has("fence") ? Op::kWgmmaFence : has("commit_group") ? Op::kWgmmaCommit : Op::kWgmmaWait;
        return true;
      }
      in->op = Op::kWgmma;
      std::vector<Ty> types;
      for (size_t j = 1; j < parts.size(); ++j) {
        const std::string& p = parts[j];
        if (p == "mma_async" || p == "sync" || p == "aligned") continue;
        if (p.size() > 1 && p[0] == 'm' && std::isdigit(static_cast<unsigned char>(p[1]))) {
          if (std::sscanf(p.c_str(), "m%dn%dk%d", &in->m, &in->n, &in->k) != 3) Fail(in->line, in->text, "bad wgmma shape");
          continue;
        }
        auto t = TypeNames().find(p);
        if (t == TypeNames().end()) Fail(in->line, in->text, "modifier ." + p + " of wgmma is not supported by the PTX emulator");
        types.push_back(t->second);
      }
      if (types.size() != 3) Fail(in->line, in->text, "wgmma needs its d, a and b types");
      in->t = types[0];
      in->ta = types[1];
      in->tb = types[2];
      return true;
    }
    if (op == "stmatrix") {
      only({"sync", "aligned", "m8n8", "x1", "x2", "x4", "trans", "shared", "shared::cta", "b16"});
      in->op = Op::kStmatrix;
      in->mode = has("x4") ? 4 : has("x2") ? 2 : 1;
      in->trans = has("trans");
      in->space = Space::kShared;
      return true;
    }
    if (op == "elect") {
      only({"sync"});
      in->op = Op::kElect;
      return true;
    }
    if (op == "tcgen05") {             // sm_100a (PTX ISA, "TensorCore 5th Generation Family Instructions")
      in->pair = has("cta_group::2");  // a CTA pair (ranks 2i, 2i + 1 of the cluster)
      const std::string& what = parts.size() > 1 ? parts[1] : op;
      if (what == "fence::before_thread_sync" || what == "fence::after_thread_sync" || what == "wait::ld" ||
          what == "wait::st") {
        only({what.c_str(), "sync", "aligned"});
        in->op = Op::kNop;  // ordering: the emulator completes tcgen05.ld / st in program order
        return true;
      }
      if (what == "alloc" || what == "dealloc" || what == "relinquish_alloc_permit") {
        only({what.c_str(), "cta_group::1", "cta_group::2", "sync", "aligned", "shared::cta", "b32"});
        in->op = what == "alloc" ? Op::kTcAlloc : what == "dealloc" ? Op::kTcDealloc : Op::kTcRelinquish;
        return true;
      }
      if (what == "mma") {
        only({"mma", "cta_group::1", "cta_group::2", "kind::f16", "kind::f8f6f4", "kind::i8", "kind::tf32",
              "kind::mxf8f6f4", "kind::mxf4nvf4", "kind::mxf4", "block_scale", "scale_vec::1X",
              "scale_vec::2X", "scale_vec::4X", "block16", "block32"});
        in->op = Op::kTcMma;
        // 3: kind::mxf8f6f4.block_scale (scale_vec::1X, its only vector size; two more operands: the scales);
        // 4: kind::mxf4nvf4.block_scale.block16 (= scale_vec::4X: NVFP4); 5: kind::mxf4.block_scale (its
        // only vector size scale_vec::2X = .block32 at K = 64: MXFP4 two values a byte)
        in->mode = has("kind::f16")        ? 0
                   : has("kind::f8f6f4")   ? 1
                   : has("kind::i8")       ? 2
                   : has("kind::mxf8f6f4") ? 3
                   : has("kind::mxf4nvf4") ? 4
                   : has("kind::mxf4")     ? 5
                   : has("kind::tf32")     ? 6  // float32 operands read as tf32
                                           : 7;
        if (in->mode == 7) Fail(in->line, in->text, "tcgen05.mma without a kind");
        if ((in->mode >= 3 && in->mode <= 5) != has("block_scale"))
          Fail(in->line, in->text,
               "kind::mxf8f6f4, kind::mxf4 and kind::mxf4nvf4 are block-scaled (.block_scale), and the other "
               "kinds are not here");
        if (in->mode == 3 && (has("scale_vec::4X") || has("scale_vec::2X") || has("block16")))
          Fail(in->line, in->text, "kind::mxf8f6f4 takes scale_vec::1X (.block32)");
        if (in->mode == 5 && (has("scale_vec::4X") || has("scale_vec::1X") || has("block16")))
          Fail(in->line, in->text, "kind::mxf4 takes scale_vec::2X (.block32)");
        if (in->mode == 4 && !(has("scale_vec::4X") || has("block16")))
          Fail(in->line, in->text, "the PTX emulator runs kind::mxf4nvf4 with .block16 (scale_vec::4X) only");
        return true;
      }
      if (what == "cp") {  // tcgen05.cp.cta_group::N.32x128b.warpx4 [taddr], s-desc
        only({"cp", "cta_group::1", "cta_group::2", "32x128b", "warpx4"});
        if (!has("32x128b") || !has("warpx4"))
          Fail(in->line, in->text, "tcgen05.cp: the PTX emulator runs the .32x128b.warpx4 shape");
        in->op = Op::kTcCp;
        return true;
      }
      if (what == "commit") {
        only({"commit", "cta_group::1", "cta_group::2", "mbarrier::arrive::one", "shared::cluster",
              "shared::cta", "multicast::cluster", "b64"});
        in->op = Op::kTcCommit;
        in->mode = has("multicast::cluster") ? 1 : 0;  // the ctaMask operand follows the mbarrier
        return true;
      }
      if (what == "ld" || what == "st") {
        in->op = what == "ld" ? Op::kTcLd : Op::kTcSt;
        for (size_t j = 2; j < parts.size(); ++j) {
          const std::string& p = parts[j];
          if (p == "sync" || p == "aligned" || p == "32x32b" || p == "b32") continue;
          if (p == "16x32bx2") {  // immHalfSplitoff follows the address
            in->mode = 1;
            continue;
          }
          int n = 0;
          if (p.size() > 1 && p[0] == 'x' && std::sscanf(p.c_str() + 1, "%d", &n) == 1 && n >= 1 &&
              n <= 128 && !(n & (n - 1))) {
            in->n = n;
            continue;
          }
          Fail(in->line, in->text,
               "modifier ." + p + " of tcgen05." + what +
                   " is not supported by the PTX emulator (it runs the .32x32b and .16x32bx2 shapes)");
        }
        if ((!has("32x32b") && !in->mode) || !in->n)
          Fail(in->line, in->text, "tcgen05." + what + " needs .32x32b (or .16x32bx2) and a count .xN");
        return true;
      }
      Fail(in->line, in->text, "tcgen05." + what + " is not supported by the PTX emulator");
    }
    if (op == "setmaxnreg") {  // a register-allocation hint: nothing to emulate
      only({"inc", "dec", "sync", "aligned", "u32"});
      in->op = Op::kNop;
      return true;
    }
    return false;
  }

  void Decode(const std::string& opcode, Instr* in) {
    std::vector<std::string> parts = SplitDots(opcode);
    if (DecodeHopper(parts, in)) return;
    auto it = OpNames().find(parts[0]);
    if (it == OpNames().end()) Fail(in->line, in->text, "instruction '" + parts[0] + "' is not supported by the PTX emulator");
    in->op = it->second;
    in->cc_in = parts[0] == "addc" || parts[0] == "subc" || parts[0] == "madc";
    std::vector<Ty> types;
    for (size_t j = 1; j < parts.size(); ++j) {
      const std::string& p = parts[j];
      if (auto t = TypeNames().find(p); t != TypeNames().end()) {
        types.push_back(t->second);
      } else if (p == "global") {
        (in->op == Op::kCpAsync ? in->space2 : in->space) = Space::kGlobal;
      } else if (p == "shared" || p == "shared::cta") {
        in->space = Space::kShared;
      } else if (p == "shared::cluster" && (in->op == Op::kLd || in->op == Op::kSt)) {
        in->space = Space::kShared;  // a mapa address: possibly a peer block's shared memory
        in->cluster_addr = true;
      } else if (p == "param") {
        in->space = Space::kParam;
      } else if (p == "local") {
        in->space = Space::kLocal;
      } else if (p == "const") {
        in->space = Space::kConst;
      } else if (p == "to") {
        in->to = true;
      } else if (p == "v2" || p == "v4" || p == "v8") {
        in->vec = static_cast<uint8_t>(p[1] - '0');
      } else if (auto c = CmpNames().find(p); c != CmpNames().end() && (in->op == Op::kSetp)) {
        in->cmp = c->second;
      } else if (auto r = RndNames().find(p); r != RndNames().end()) {
        in->rnd = r->second;
      } else if (p == "cc" && (in->op == Op::kAdd || in->op == Op::kSub || in->op == Op::kMad)) {
        in->cc_out = true;
      } else if (p == "ftz") {
        in->ftz = true;
      } else if (p == "sat" || p == "satfinite") {
        in->sat = true;
      } else if (p == "approx") {
        in->approx = true;
      } else if (p == "wide") {
        in->wide = true;
      } else if (p == "hi") {
        in->hi = true;
      } else if (p == "lo") {
        in->hi = false;
      } else if (p == "and" && in->op == Op::kSetp) {
        in->boolop = 1;
      } else if (p == "or" && in->op == Op::kSetp) {
        in->boolop = 2;
      } else if (p == "xor" && in->op == Op::kSetp) {
        in->boolop = 3;
      } else if (in->op == Op::kShfl && (p == "up" || p == "down" || p == "bfly" || p == "idx")) {
        in->mode = p == "up" ? 0 : p == "down" ? 1 : p == "bfly" ? 2 : 3;
      } else if (in->op == Op::kVote && (p == "any" || p == "all" || p == "uni" || p == "ballot")) {
        in->mode = p == "any" ? 0 : p == "all" ? 1 : p == "uni" ? 2 : 3;
      } else if ((in->op == Op::kAtom || in->op == Op::kRed) &&
                 (p == "add" || p == "min" || p == "max" || p == "exch" || p == "cas" || p == "and" ||
                  p == "or" || p == "xor" || p == "inc" || p == "dec")) {
        static const char* names[] = {"add", "min", "max", "exch", "cas", "and", "or", "xor", "inc", "dec"};
        for (uint8_t q = 0; q < 10; ++q)
          if (p == names[q]) in->mode = q;
      } else if (in->op == Op::kShf && (p == "l" || p == "r" || p == "wrap" || p == "clamp")) {
        // mode bit 0: right (.r), bit 1: clamp (.clamp; else .wrap)
        if (p == "r") in->mode |= 1;
        if (p == "clamp") in->mode |= 2;
      } else if (in->op == Op::kLdmatrix && (p == "x1" || p == "x2" || p == "x4")) {
        in->mode = static_cast<uint8_t>(p[1] - '0');
      } else if (in->op == Op::kTestp && (p == "finite" || p == "infinite" || p == "number" ||
                                          p == "notanumber" || p == "normal" || p == "subnormal")) {
        static const char* names[] = {"finite", "infinite", "number", "notanumber", "normal", "subnormal"};
        for (uint8_t q = 0; q < 6; ++q)
          if (p == names[q]) in->mode = q;
      } else if (p == "trans") {
        in->trans = true;
      } else if (in->op == Op::kMma &&
                 (p == "kind::mxf4nvf4" || p == "kind::mxf8f6f4" || p == "kind::mxf4" || p == "block_scale" ||
                  p == "scale_vec::4X" || p == "scale_vec::2X" || p == "scale_vec::1X")) {
        in->mode = 1;  // block-scaled; which form, checked below
      } else if (in->op == Op::kMma && p.size() > 1 && p[0] == 'm' &&
                 std::isdigit(static_cast<unsigned char>(p[1]))) {
        if (std::sscanf(p.c_str(), "m%dn%dk%d", &in->m, &in->n, &in->k) != 3)
          Fail(in->line, in->text, "bad mma shape '" + p + "'");
      } else if (in->op == Op::kCpAsync &&
                 (p == "async" || p == "commit_group" || p == "wait_group" || p == "wait_all")) {
        if (p == "commit_group") in->op = Op::kCpAsyncCommit;
        if (p == "wait_group") in->op = Op::kCpAsyncWait;
        if (p == "wait_all") in->op = Op::kCpAsyncWaitAll;
      } else if (in->op == Op::kBar && (p == "warp")) {
        in->op = Op::kBarWarp;
      } else if (in->op == Op::kBar && (p == "arrive" || p == "red")) {
        Fail(in->line, in->text, "bar." + p + " is not supported by the PTX emulator");
      } else if (in->op == Op::kFence && (p == "proxy" || p == "async" || p == "mbarrier_init" ||
                                          p == "cluster" || p == "acq_rel" || p == "shared::cta")) {
      } else if (in->op == Op::kLd && (p == "acquire" || p == "relaxed" || p == "volatile")) {
        in->spin = true;  // (its scope and order are the emulator's sequential consistency anyway)
      } else if (IgnoredModifiers().count(p)) {
      } else if (in->op == Op::kAtom && (p == "noftz")) {
      } else {
        Fail(in->line, in->text, "modifier ." + p + " of " + parts[0] + " is not supported by the PTX emulator");
      }
    }
    if (in->op == Op::kFence && std::find(parts.begin(), parts.end(), "proxy") != parts.end() &&
        std::find(parts.begin(), parts.end(), "async") != parts.end())
      in->op = Op::kFenceProxyAsync;  // orders generic-proxy and async-proxy accesses (PTX ISA 9.7.13.4)
    if (in->op == Op::kMma) {
      // mma.sync.aligned.shape.row.col{.satfinite}.dtype.atype.btype.ctype; block-scaled:
      // mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3
      // mma.sync.aligned.m16n8k64.row.col.kind::mxf4{nvf4}.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0
      // mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.<a>.<b>.f32.ue8m0
      if (in->mode == 1) {
        auto has = [&](const char* q) { return std::find(parts.begin(), parts.end(), q) != parts.end(); };
        const int vecs = has("scale_vec::1X") + has("scale_vec::2X") + has("scale_vec::4X");
        if (!has("block_scale") || vecs > 1) {
          Fail(in->line, in->text, "a block-scaled mma.sync names .block_scale and at most one .scale_vec");
        } else if (has("kind::mxf4nvf4") && has("scale_vec::4X")) {
          in->mode = 1;
        } else if (has("kind::mxf8f6f4") && (vecs == 0 || has("scale_vec::1X"))) {
          in->mode = 2;  // .scale_vec::1X, the default of kind::mxf8f6f4
        } else if ((has("kind::mxf4") && (vecs == 0 || has("scale_vec::2X"))) ||
                   (has("kind::mxf4nvf4") && has("scale_vec::2X"))) {
          in->mode = 3;  // .scale_vec::2X, the default of kind::mxf4
        } else {
          Fail(in->line, in->text,
               "the block-scaled mma.sync forms are kind::mxf8f6f4 with .scale_vec::1X, kind::mxf4 with "
               ".scale_vec::2X and kind::mxf4nvf4 with .scale_vec::2X or ::4X (PTX ISA 9.7.14.3, Table 36)");
        }
        if (types.size() != 5)
          Fail(in->line, in->text, "a block-scaled mma needs its d, a, b, c and scale types");
        in->t2 = types[4];
        types.pop_back();
      }
      if (types.size() != 4) Fail(in->line, in->text, "mma needs its d, a, b and c types");
      in->t = types[0];
      in->ta = types[1];
      in->tb = types[2];
      in->tc = types[3];
      return;
    }
    if (!types.empty()) in->t = types[0];
    if (types.size() > 1) in->t2 = types[1];
  }

  void Validate(const Instr& in) {
    auto need = [&](size_t n) {
      if (in.ops.size() < n)
        Fail(in.line, in.text, "expects " + std::to_string(n) + " operands, has " + std::to_string(in.ops.size()));
    };
    switch (in.op) {
      case Op::kMov: case Op::kCvt: case Op::kCvta: case Op::kNot: case Op::kAbs: case Op::kNeg:
      case Op::kLd: case Op::kSt: case Op::kCnot: case Op::kEx2: case Op::kLg2: case Op::kRcp: case Op::kSqrt:
      case Op::kRsqrt: case Op::kSin: case Op::kCos: case Op::kTanh: case Op::kPopc: case Op::kClz:
      case Op::kBrev: case Op::kLdmatrix: case Op::kTestp:
        need(2);
        break;
      case Op::kAdd: case Op::kSub: case Op::kMul: case Op::kDiv: case Op::kRem: case Op::kMin: case Op::kMax:
      case Op::kAnd: case Op::kOr: case Op::kXor: case Op::kShl: case Op::kShr: case Op::kSetp:
      case Op::kCopysign: case Op::kCpAsync:
        need(3);
        break;
      case Op::kMad: case Op::kFma: case Op::kSelp: case Op::kBfe: case Op::kShfl: case Op::kMma:
      case Op::kPrmt: case Op::kShf:
        need(4);
        break;
      case Op::kBfi: case Op::kLop3:
        need(5);
        break;
      default: break;
    }
    if ((in.op == Op::kLd || in.op == Op::kSt) && in.t == Ty::kNone) Fail(in.line, in.text, "ld/st without a type");
  }

  Module* m_;
  Kernel* kernel_ = nullptr;
  int kernel_line_ = 0;
  std::vector<int> scopes_;  // open braces of the current function
  std::vector<std::unordered_map<std::string, int>> reg_scopes_;
  std::unordered_map<std::string, int> sym_index_;
  struct Fixup {
    int idx;
    std::string label;
    size_t depth;
  };
  std::vector<std::unordered_map<std::string, int>> label_scopes_;
  std::vector<Fixup> fixups_;
  int loc_file_ = -1, loc_line_ = 0;
};

}  // namespace

std::shared_ptr<const Module> Parse(const std::string& text) {
  auto m = std::make_shared<Module>();
  Parser(m.get()).Run(text);
  return m;
}

std::vector<std::string> SupportedOpcodes() {
  std::vector<std::string> v;
  for (const auto& [name, op] : OpNames()) v.push_back(name);
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace tl::emu::ptx

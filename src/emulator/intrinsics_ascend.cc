// The Ascend AI Core in the emulator (docs/ascend.md), written from the public AscendC programming guide and
// API reference, not from the compiler's lowering:
//   - the data formats: ND rows in global memory; NZ in L1 and L0C (fractals of 16 rows x C0 columns, C0 = 32
//     bytes of elements (16 for L0C's float32), fractals walking down the rows first, each fractal
//     row-major); ZZ for the cube's A operand in L0A on dav-c220 (fractals row-major, each row-major), NZ
//     there on dav-c310; ZN for B in L0B (fractals row-major, each column-major);
//   - the instructions: DataCopy with Nd2NzParams (ND -> NZ), LoadData with LoadData2DParams (whole 512-byte
//     fractals, optionally transposed), Mmad (C = A * B, or C += A * B), Fixpipe (NZ -> ND, float32 rounded
//     to the output type), DataCopyPad (rows between global memory and the Unified Buffer, the last 32-byte
//     block padded with zeros), the vector unit's element-wise instructions;
//   - the pipes: MTE2, MTE1, M, FIX, V and MTE3 run concurrently and in order each; SetFlag/WaitFlag pairs
//     order one pipe after another.
// Values are computed in program order (what the scalar unit issues); what pipes may overlap is tracked with
// a vector clock per pipe: an instruction whose access to an element conflicts with an earlier access by
// another pipe that no flag chain orders before it is a race (reported at both DSL lines). A WaitFlag with no
// SetFlag before it is a deadlock, a SetFlag of a flag already set (and not yet waited for) loses an event,
// and a flag set and never waited for at the end of a block is reported too.
#include <array>
#include <cmath>
#include <map>
#include <tuple>

#include "emulator/intrinsic_args.h"
#include "ir/printer.h"
#include "target/ascend/target.h"

namespace tl::emu {

constexpr int kP = kNumPipes;
using Clock = std::array<int32_t, kP>;

struct Executor::AscendState {
  struct Sh {
    int8_t wpipe = -1;
    int32_t wclock = 0, wop = -1;
    Clock rclock{}, rop{};
  };
  std::array<Clock, kP> vc{};
  std::map<std::tuple<int, int, int64_t>, std::pair<Clock, int32_t>> flags;  // set flags: setter's clock, op
  std::map<const Mem*, std::vector<Sh>> shadow;
  std::vector<const StmtNode*> ops;  // each instruction executed in this block (for reports)
  bool raced = false;                // the current instruction already reported a race
};

namespace {
int64_t Ceil16(int64_t v) { return (v + 15) / 16; }
}  // namespace

void Executor::AscendBlockStart() { asc_.reset(); }

void Executor::AscendBlockEnd() {
  if (!asc_) return;
  for (auto& [key, v] : asc_->flags) {
    const StmtNode* at = asc_->ops[static_cast<size_t>(v.second)];
    const StmtNode* save = stmt_;
    stmt_ = at;
    Report("unbalanced_flag", 0, [&] {
      return std::string("SetFlag<") + AscendPipeName(std::get<0>(key)) + "_" +
             AscendPipeName(std::get<1>(key)) + ">(" + std::to_string(std::get<2>(key)) +
             ") is never waited for before the block ends";
    });
    stmt_ = save;
  }
  asc_.reset();
}

bool Executor::ExecAscend(const CallNode* c, const Lanes& act) {
  const std::string& op = c->op;
  if (op.rfind("ascend.", 0) != 0) return false;
  if (act.size() != 1)
    Unsupported("Ascend instructions are issued by the one scalar unit of a block (threads=1)");
  if (!asc_) asc_ = std::make_shared<AscendState>();
  AscendState& S = *asc_;
  const int32_t opi = static_cast<int32_t>(S.ops.size());
  S.ops.push_back(stmt_);
  S.raced = false;
  const std::string name = op.substr(7);
  auto I = [&](size_t i) { return HostInt(c->args[i]); };
  auto pipe_arg = [&](size_t i) {
    int p = AscendPipeOf(StrArg(c, i));
    if (p < 0) Bad(c, "unknown pipe " + StrArg(c, i));
    return p;
  };
  if (name == "set_flag" || name == "wait_flag") {
    const int p = pipe_arg(0), q = pipe_arg(1);
    const auto key = std::make_tuple(p, q, I(2));
    const std::string ev =
        std::string(AscendPipeName(p)) + "_" + AscendPipeName(q) + ">(" + std::to_string(I(2)) + ")";
    // the flag instruction is issued by the scalar unit, after what it read or waited for
    for (int r = 0; r < kP; ++r)
      if (!AscendPipeOnCube(name == "set_flag" ? p : q))
        S.vc[name == "set_flag" ? p : q][r] = std::max(S.vc[name == "set_flag" ? p : q][r], S.vc[kS][r]);
    if (name == "set_flag") {
      ++S.vc[p][p];
      if (S.flags.count(key))
        Report("flag_set_twice", 0,
               [&] { return "SetFlag<" + ev + " while the flag is still set: an event is lost"; });
      S.flags[key] = {S.vc[p], opi};
    } else {
      auto it = S.flags.find(key);
      if (it == S.flags.end()) {
        Report("deadlock", 0, [&] {
          return "WaitFlag<" + ev + " with no SetFlag before it: pipe " + AscendPipeName(q) +
                 " waits forever";
        });
        return true;
      }
      for (int r = 0; r < kP; ++r) S.vc[q][r] = std::max(S.vc[q][r], it->second.first[r]);
      S.flags.erase(it);
    }
    return true;
  }
  // ---- an instruction on a pipe: its operands, element access checks -----------------------------------
  // clang-format off
  static const std::map<std::string, int> pipes = {
      {"copy_gm_to_l1", kMTE2}, {"load2d", kMTE1},  {"mmad", kM},     {"fixpipe", kFIX},    {"copy_gm_to_ub", kMTE2V},
      {"copy_ub_to_gm", kMTE3}, {"vbin", kV},       {"vscalar", kV},  {"vun", kV},          {"vdup", kV},
      {"vcast", kV},            {"vreduce", kV},    {"vdup_row", kV}, {"vscalar_row", kV},   {"vcmp", kV},
      {"vsel", kV},             {"vcast_rows", kV}};
  // clang-format on
  auto pit = pipes.find(name);
  if (pit == pipes.end()) Bad(c, "unknown Ascend instruction");
  // the scalar unit issues the instruction: it comes after everything the scalar unit waited for or read
  int P = pit->second;
  if (!AscendPipeOnCube(P))  // the vector core's scalar unit issues it (the cube's reads nothing)
    for (int r = 0; r < kP; ++r) S.vc[P][r] = std::max(S.vc[P][r], S.vc[kS][r]);
  int32_t now = ++S.vc[P][P];
  struct Opnd {
    Mem* m;
    int64_t base;
  };
  // The start alignment (bytes) of each on-chip operand, from the AscendC API reference: vector and
  // Unified-Buffer operands 32, L0A / L0B (the cube's operands) 512, L0C 64. 0: none (global memory, a
  // value the scalar unit reads).
  // clang-format off
  static const std::map<std::string, std::vector<int>> align = {
      {"copy_gm_to_l1", {32, 0}}, {"load2d", {512, 32}}, {"mmad", {64, 512, 512}}, {"fixpipe", {0, 64}},
      {"copy_gm_to_ub", {32, 0}}, {"copy_ub_to_gm", {0, 32}}, {"vbin", {0, 32, 32, 32}}, {"vscalar", {0, 32, 32}},
      {"vun", {0, 32, 32}}, {"vdup", {32}}, {"vcast", {32, 32}}, {"vreduce", {0, 32, 32, 32}},
      {"vdup_row", {32, 0}}, {"vscalar_row", {0, 32, 32, 0}}, {"vcmp", {0, 32, 32, 32}}, {"vsel", {32, 32, 32, 32}},
      {"vcast_rows", {32, 32}}};
  // clang-format on
  auto operand = [&](size_t i) -> Opnd {
    const BufferLoadNode* l = Operand(c, i);
    TmpScope ts(this);
    Slot* f = Tmp();
    Locate(l->buffer, l->indices, act, f);
    Opnd o{&MemOf(l->buffer.get()), f[0].i};
    auto al = align.find(name);
    const int need = al != align.end() && i < al->second.size() ? al->second[i] : 0;
    const int64_t byte = o.base * o.m->esize;
    if (need && !o.m->global() && byte % need != 0)
      Report("misaligned", 0, [&] {
        return "operand " + std::to_string(i) + " of " + name + " starts at byte " + std::to_string(byte) +
               " of '" + o.m->buf->name + "', not a multiple of " + std::to_string(need) +
               " (the instruction needs a " + std::to_string(need) + "-byte aligned address)";
      });
    return o;
  };
  auto where = [&](int32_t o) {
    const StmtNode* s = o >= 0 ? S.ops[static_cast<size_t>(o)] : nullptr;
    return s && s->span.defined() ? " (at " + FormatSpan(s->span) + ")" : std::string();
  };
  // Checks one element access; false when it is out of bounds (not performed).
  auto access = [&](Opnd& o, int64_t flat, bool write) -> bool {
    Mem& m = *o.m;
    if (flat < 0 || flat >= m.n) {
      Report("out_of_bounds", 0, [&] {
        return std::string("pipe ") + AscendPipeName(P) + " " + (write ? "writes" : "reads") + " element " +
               std::to_string(flat) + " of '" + m.buf->name + "' (" + std::to_string(m.n) + " elements)";
      });
      return false;
    }
    if (!opt_.check_races) return true;
    auto& sh = S.shadow[&m];
    if (sh.empty()) sh.resize(static_cast<size_t>(m.n));
    AscendState::Sh& e = sh[static_cast<size_t>(flat)];
    const Clock& mine = S.vc[P];
    auto race = [&](int other, bool other_write, int32_t other_op) {
      if (S.raced) return;
      S.raced = true;
      Report("race", 0, [&] {
        return std::string("pipe ") + AscendPipeName(P) + " " + (write ? "writes" : "reads") + " '" +
               m.buf->name + "' element " + std::to_string(flat) + " while pipe " + AscendPipeName(other) +
               "'s " + (other_write ? "write" : "read") + " of it" + where(other_op) +
               " is not ordered before (no SetFlag<" + AscendPipeName(other) + "_" + AscendPipeName(P) +
               "> / WaitFlag between them)";
      });
    };
    if (e.wpipe >= 0 && e.wpipe != P && e.wclock > mine[e.wpipe]) race(e.wpipe, true, e.wop);
    if (write) {
      for (int r = 0; r < kP; ++r)
        if (r != P && e.rclock[r] > mine[r]) race(r, false, e.rop[r]);
      e.wpipe = static_cast<int8_t>(P);
      e.wclock = now;
      e.wop = opi;
    } else {
      e.rclock[P] = now;
      e.rop[P] = opi;
    }
    return true;
  };
  auto written = [&](Opnd& o, int64_t f) -> uint8_t& {
    static thread_local uint8_t scratch;  // global memory is always initialised
    scratch = 1;
    return o.m->global() ? scratch : o.m->written[static_cast<size_t>(f)];
  };
  auto uninit = [&](Opnd& o, int64_t f) {
    if (!opt_.check_uninit || written(o, f)) return;
    Report("uninitialized_read", 0, [&] {
      return std::string("pipe ") + AscendPipeName(P) + " reads element " + std::to_string(f) + " of '" +
             o.m->buf->name + "', which nothing wrote";
    });
  };
  auto get = [&](Opnd& o, int64_t f) { return AsDouble(LoadScalar(o.m->Addr(0, f), o.m->t), o.m->t); };
  auto put = [&](Opnd& o, int64_t f, double v) {
    Slot s;
    if (o.m->t.is_float())
      s.f = RoundFloat(v, o.m->t);
    else
      s.i = WrapInt(static_cast<int64_t>(v), o.m->t);
    StoreScalar(o.m->Addr(0, f), o.m->t, s);
  };
  // an element moved as is (its bytes and its written flag)
  auto move = [&](Opnd& d, int64_t df, Opnd& s, int64_t sf, bool check_init) {
    if (!access(s, sf, false) || !access(d, df, true)) return;
    if (check_init && d.m->global()) uninit(s, sf);  // reported where it reaches the program's tensors
    std::memcpy(d.m->Addr(0, df), s.m->Addr(0, sf), static_cast<size_t>(d.m->esize));
    written(d, df) = written(s, sf);
  };

  // a row's value read by the scalar unit (GetValue) before the vector instruction that uses it
  double row_value = 0;
  bool row_written = true;
  if (name == "vscalar_row" || name == "vdup_row") {
    const int vp = P;
    --S.vc[vp][vp];  // the scalar unit reads first; the vector instruction is issued after
    P = kS;
    now = ++S.vc[kS][kS];
    Opnd e = operand(name == "vdup_row" ? 1 : 3);
    if (access(e, e.base,
               false)) {  // an unwritten value is not reported here: it propagates (as in the vector unit)
      row_value = get(e, e.base);
      row_written = written(e, e.base) != 0;
    }
    P = vp;
    for (int r = 0; r < kP; ++r) S.vc[P][r] = std::max(S.vc[P][r], S.vc[kS][r]);
    now = ++S.vc[P][P];
    S.raced = false;
  }
  if (name == "copy_gm_to_l1") {  // DataCopy(L1, GM, Nd2NzParams{1, rows, cols, 0, src_d, nz_rows, 1, 0})
    Opnd d = operand(0), s = operand(1);
    const int64_t rows = I(2), cols = I(3), sd = I(4), nz = I(5), c0 = 32 / d.m->esize;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < cols; ++k)
        move(d, d.base + (k / c0) * nz * c0 + r * c0 + k % c0, s, s.base + r * sd + k, false);
  } else if (name ==
             "load2d") {  // LoadData(L0, L1, LoadData2DParams{0, repeat, src_stride, 0, 0, transpose})
    Opnd d = operand(0), s = operand(1);
    const int64_t rep = I(2), stride = I(3), fe = 512 / d.m->esize;
    const bool tr = I(4) != 0;
    if (tr && d.m->esize != 2) Bad(c, "a transposing LoadData moves 16x16 fractals of 2-byte elements");
    for (int64_t i = 0; i < rep; ++i)
      for (int64_t e = 0; e < fe; ++e)
        move(d, d.base + i * fe + e, s, s.base + i * stride * fe + (tr ? (e % 16) * 16 + e / 16 : e), false);
  } else if (name == "mmad") {  // Mmad(L0C, L0A, L0B, MmadParams{m, n, k, init})
    Opnd C = operand(0), A = operand(1), B = operand(2);
    // fractals are 16 rows of 32 bytes: c0 = 16 float16 / bfloat16 or 32 int8 values of k a row
    const int64_t c0 = 32 / A.m->esize, fe = 16 * c0;
    const int64_t m = I(3), n = I(4), k = I(5), MB = Ceil16(m), KB = (k + c0 - 1) / c0, NB = Ceil16(n);
    const bool init = I(6) != 0, a_nz = I(7) != 0;
    auto ai = [&](int64_t r, int64_t q) {
      return A.base + (a_nz ? (q / c0) * MB * fe + r * c0 + q % c0
                            : ((r / 16) * KB + q / c0) * fe + (r % 16) * c0 + q % c0);
    };
    auto bi = [&](int64_t q, int64_t col) {
      return B.base + ((q / c0) * NB + col / 16) * fe + (col % 16) * c0 + q % c0;
    };
    auto ci = [&](int64_t r, int64_t col) { return C.base + (col / 16) * MB * 256 + r * 16 + col % 16; };
    // what nothing wrote propagates (a row of A, a column of B): it is reported where it reaches the
    // program's tensors, so the padding rows of a ragged block are computed and never stored without a false
    // alarm
    std::vector<double> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
    std::vector<uint8_t> arow(static_cast<size_t>(m), 1), bcol(static_cast<size_t>(n), 1);
    bool ok = true;
    for (int64_t r = 0; r < m; ++r)
      for (int64_t q = 0; q < k; ++q) {
        const int64_t f = ai(r, q);
        if (!(ok &= access(A, f, false))) break;
        arow[static_cast<size_t>(r)] &= written(A, f);
        a[static_cast<size_t>(r * k + q)] = get(A, f);
      }
    for (int64_t q = 0; q < k && ok; ++q)
      for (int64_t col = 0; col < n; ++col) {
        const int64_t f = bi(q, col);
        if (!(ok &= access(B, f, false))) break;
        bcol[static_cast<size_t>(col)] &= written(B, f);
        b[static_cast<size_t>(q * n + col)] = get(B, f);
      }
    for (int64_t r = 0; r < m && ok; ++r)
      for (int64_t col = 0; col < n; ++col) {
        const int64_t f = ci(r, col);
        if (!init && !access(C, f, false)) return true;
        if (!access(C, f, true)) return true;
        double acc = 0;
        for (int64_t q = 0; q < k; ++q)
          acc += a[static_cast<size_t>(r * k + q)] * b[static_cast<size_t>(q * n + col)];
        uint8_t w = arow[static_cast<size_t>(r)] & bcol[static_cast<size_t>(col)];
        if (!init) {
          w &= written(C, f);
          acc += get(C, f);
        }
        put(C, f, acc);
        written(C, f) = w;
      }
  } else if (name == "fixpipe") {  // Fixpipe(GM, L0C, {n, m, src_stride, dst_stride, quant, nz2nd})
    Opnd d = operand(0), s = operand(1);
    const int64_t m = I(2), n = I(3), ss = I(4), ds = I(5);
    for (int64_t r = 0; r < m; ++r)
      for (int64_t col = 0; col < n; ++col) {
        const int64_t sf = s.base + (col / 16) * ss * 16 + r * 16 + col % 16, df = d.base + r * ds + col;
        if (!access(s, sf, false) || !access(d, df, true)) continue;
        if (d.m->global()) uninit(s, sf);  // the program's tensor; a workspace carries the flag on
        put(d, df, get(s, sf));
        written(d, df) = written(s, sf);  // a workspace in global memory the vector core reads next
      }
  } else if (name == "copy_gm_to_ub" || name == "copy_ub_to_gm") {  // DataCopyPad
    const bool in = name == "copy_gm_to_ub";
    Opnd d = operand(0), s = operand(1);
    Opnd& ub = in ? d : s;
    const int64_t rows = I(2), cols = I(3), gs = I(4), pitch = I(5);
    const int64_t pad = std::min(pitch, (cols * ub.m->esize + 31) / 32 * 32 / ub.m->esize);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t col = 0; col < cols; ++col)
        move(d, d.base + r * (in ? pitch : gs) + col, s, s.base + r * (in ? gs : pitch) + col, !in);
      for (int64_t col = cols; in && col < pad; ++col) {
        const int64_t f = d.base + r * pitch + col;
        if (!access(d, f, true)) continue;
        put(d, f, 0);
        written(d, f) = 1;
      }
    }
  } else if (name == "vcmp" || name == "vsel") {
    // Compare(mask, src0, src1, mode, count): bit e % 8 of mask byte e / 8 (lowest first) is set where
    // src0[e] (mode) src1[e]; Select(dst, mask, src0, src1, VSEL_TENSOR_TENSOR_MODE, count): dst[e] = src0[e]
    // where the bit is set, else src1[e]. Both take whole 256-byte repeats in their count form.
    const bool cmp = name == "vcmp";
    const size_t o = cmp ? 1 : 0;
    Opnd d = operand(o), m = cmp ? d : operand(1), x = operand(2), y = operand(3);
    const int64_t count = I(4);
    const Opnd& data = cmp ? x : d;
    if ((count * data.m->esize) % 256 != 0)
      Report("misaligned", 0, [&] {
        return name + " over " + std::to_string(count) + " elements of " + std::to_string(data.m->esize) +
               " bytes: not whole 256-byte repeats";
      });
    if (cmp) {
      const std::string mode = StrArg(c, 0);
      for (int64_t byte = 0; byte < (count + 7) / 8; ++byte) {
        int bits = 0;
        bool all = true;
        for (int64_t e = byte * 8; e < std::min(count, byte * 8 + 8); ++e) {
          if (!access(x, x.base + e, false) || !access(y, y.base + e, false)) continue;
          const double a = get(x, x.base + e), b = get(y, y.base + e);
          const bool r = mode == "LT"   ? a < b
                         : mode == "LE" ? a <= b
                         : mode == "GT" ? a > b
                         : mode == "GE" ? a >= b
                         : mode == "EQ" ? a == b
                         : mode == "NE" ? a != b
                                        : (Bad(c, "unknown compare mode " + mode), false);
          bits |= static_cast<int>(r) << (e - byte * 8);
          all &= written(x, x.base + e) && written(y, y.base + e);
        }
        if (!access(d, d.base + byte, true)) continue;
        put(d, d.base + byte, bits);
        written(d, d.base + byte) = all;  // a byte from unwritten elements stays unwritten
      }
    } else {
      for (int64_t e = 0; e < count; ++e) {
        const int64_t mf = m.base + e / 8;
        if (!access(m, mf, false)) continue;
        const bool bit = (static_cast<int64_t>(get(m, mf)) >> (e % 8)) & 1;
        Opnd& s = bit ? x : y;
        if (!access(s, s.base + e, false) || !access(d, d.base + e, true)) continue;
        put(d, d.base + e, get(s, s.base + e));
        written(d, d.base + e) = static_cast<uint8_t>(written(m, mf) && written(s, s.base + e));
      }
    }
  } else if (name == "vcast_rows") {  // Cast(dst, src, mode, mask 1, repeats, {1, 1, 1, 1}): a value a block
    Opnd d = operand(0), x = operand(1);
    const int64_t reps = I(2), ds = 32 / d.m->esize, ss = 32 / x.m->esize;
    for (int64_t r = 0; r < reps; ++r) {
      const int64_t df = d.base + r * ds, xf = x.base + r * ss;
      if (!access(x, xf, false) || !access(d, df, true)) continue;
      Slot cv = Convert(LoadScalar(x.m->Addr(0, xf), x.m->t), x.m->t, d.m->t);
      put(d, df, AsDouble(cv, d.m->t));
      written(d, df) = written(x, xf);
    }
  } else if (name == "vreduce") {  // ReduceMax/Min/Sum(dst, src, work, count): dst[0] = the reduction
    const std::string fn = StrArg(c, 0);
    Opnd d = operand(1), x = operand(2), w = operand(3);
    const int64_t count = I(4);
    double r = fn == "Max" ? -INFINITY : fn == "Min" ? INFINITY : 0;
    bool all = true;
    for (int64_t i = 0; i < count; ++i) {
      if (!access(x, x.base + i, false)) return true;
      const double v = get(x, x.base + i);
      all &= written(x, x.base + i) != 0;
      r = fn == "Max" ? std::max(r, v) : fn == "Min" ? std::min(r, v) : r + v;
    }
    for (int64_t i = 0; i < std::min(count, w.m->n - w.base); ++i)
      if (access(w, w.base + i, true))
        written(w, w.base + i) = 1;  // the work area is scratch the instruction writes
    if (!access(d, d.base, true)) return true;
    put(d, d.base, r);
    written(d, d.base) = all;
  } else if (name == "vdup_row" || name == "vscalar_row") {  // per row: dst = src (op) the row's value
    const bool dup = name == "vdup_row";
    const std::string fn = dup ? "" : StrArg(c, 0);
    Opnd d = operand(dup ? 0 : 1);
    Opnd x = dup ? d : operand(2);
    const int64_t count = I(dup ? 2 : 4);
    for (int64_t i = 0; i < count; ++i) {
      if (!dup && !access(x, x.base + i, false)) continue;
      if (!access(d, d.base + i, true)) continue;
      const double a = dup ? 0 : get(x, x.base + i), b = row_value;
      double r = 0;
      if (dup)
        r = b;
      else if (fn == "Adds")
        r = a + b;
      else if (fn == "Subs")
        r = a - b;
      else if (fn == "Muls")
        r = a * b;
      else if (fn == "Maxs")
        r = std::max(a, b);
      else if (fn == "Mins")
        r = std::min(a, b);
      else
        Bad(c, "unknown row instruction " + fn);
      put(d, d.base + i, r);
      written(d, d.base + i) = static_cast<uint8_t>(row_written && (dup || written(x, x.base + i)));
    }
  } else {  // the vector unit: `count` elements from each operand's first
    const bool bin = name == "vbin", sc = name == "vscalar", un = name == "vun", dup = name == "vdup";
    const std::string fn = bin || sc || un ? StrArg(c, 0) : name;
    const size_t o = bin || sc || un ? 1 : 0;
    Opnd d = operand(o);
    Opnd x = dup ? d : operand(o + 1);
    Opnd y = bin ? operand(o + 2) : d;
    const int64_t count = I(bin ? o + 3 : sc ? o + 3 : o + 2);
    double s = 0;
    if (sc || dup) {
      TmpScope ts(this);
      Slot* v = Tmp();
      const Expr& e = c->args[sc ? o + 2 : o + 1];
      Eval(e, act, v);
      // the scalar is converted to the tile's type first (AscendC takes a T)
      Slot cv = Convert(v[0], e->dtype, d.m->t);
      s = AsDouble(cv, d.m->t);
    }
    const DataType dt = d.m->t;
    for (int64_t i = 0; i < count; ++i) {
      const int64_t df = d.base + i, xf = x.base + i, yf = y.base + i;
      if (!dup && !access(x, xf, false)) continue;
      if (bin && !access(y, yf, false)) continue;
      if (!access(d, df, true)) continue;
      const double a = dup ? 0 : get(x, xf), b = bin ? get(y, yf) : s;
      double r = 0;
      if (dup)
        r = s;
      else if (fn == "vcast") {
        Slot cv = Convert(LoadScalar(x.m->Addr(0, xf), x.m->t), x.m->t, dt);
        r = AsDouble(cv, dt);
      } else if (fn == "Add" || fn == "Adds")
        r = a + b;
      else if (fn == "Sub")
        r = a - b;
      else if (fn == "Mul" || fn == "Muls")
        r = a * b;
      else if (fn == "Div")
        r = dt.is_float() ? a / b : (b == 0 ? 0 : std::trunc(a / b));
      else if (fn == "Max" || fn == "Maxs")
        r = std::max(a, b);
      else if (fn == "Min" || fn == "Mins")
        r = std::min(a, b);
      else if (fn == "Exp")
        r = std::exp(a);
      else if (fn == "Ln")
        r = std::log(a);
      else if (fn == "Abs")
        r = std::fabs(a);
      else if (fn == "Sqrt")
        r = std::sqrt(a);
      else if (fn == "Rsqrt")
        r = 1.0 / std::sqrt(a);
      else
        Bad(c, "unknown vector instruction " + fn);
      put(d, df, r);
      // what is computed from unwritten elements stays unwritten (reported if it reaches global memory)
      written(d, df) = static_cast<uint8_t>((dup || written(x, xf)) && (!bin || written(y, yf)));
    }
  }
  return true;
}

}  // namespace tl::emu

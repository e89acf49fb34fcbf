// The executor's memory: buffer storage, index location with bounds checks, and the checks on
// every access -- shared-memory races between barriers, reads of never-written memory -- plus the
// report list and the full-warp requirement of warp-collective operations.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "emulator/executor.h"

namespace tl::emu {
namespace {

std::string Join(const std::vector<int64_t>& v) {
  std::ostringstream os;
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  return os.str();
}

}  // namespace

void Executor::EvalLoad(const BufferLoadNode* l, const Lanes& act, Slot* out) {
  if (l->dtype.lanes() != 1) Unsupported("vector load of " + l->dtype.str());
  TmpScope ts(this);
  Slot* flat = Tmp();
  Locate(l->buffer, l->indices, act, flat);
  Mem& m = MemOf(l->buffer.get());
  for (int t : act) {
    if (flat[t].i < 0)
      out[t].i = 0;  // not performed; 0 and 0.0 share the bit pattern
    else
      out[t] = Read(m, t, flat[t].i);
  }
  NoteBanks(m, act, flat, m.esize, false);
}

void Executor::NoteBanks(const Mem& m, const Lanes& act, const Slot* flat, int64_t bytes, bool write) {
  if (!m.shared() || act.empty()) return;
  // A pass serves 128 bytes: 128 / max(4, bytes) consecutive lanes. Offsets are relative to the buffer:
  // a uniform shift only renames the banks, so the counts hold wherever the buffer is placed.
  const int per = static_cast<int>(128 / std::max<int64_t>(4, bytes));
  const int64_t words = std::max<int64_t>(1, bytes / 4);
  BankStats& st = res_->banks[{m.buf->name, write ? "write" : "read"}];
  std::array<int64_t, 64> w;  // (bank, word) keys of one pass: at most 32 lanes x 1 word or 8 x 4
  size_t i = 0;
  while (i < act.size()) {
    const int pass = act[i] / per;
    size_t n = 0;
    for (; i < act.size() && act[i] / per == pass; ++i) {
      if (flat[act[i]].i < 0) continue;
      int64_t first = flat[act[i]].i * m.esize / 4;
      for (int64_t x = 0; x < words && n < w.size(); ++x) w[n++] = first + x;
    }
    if (n == 0) continue;
    std::sort(w.begin(), w.begin() + n,
              [](int64_t a, int64_t b) { return a % 32 != b % 32 ? a % 32 < b % 32 : a < b; });
    int ways = 0, run = 0;
    for (size_t k = 0; k < n; ++k) {
      if (k == 0 || w[k] % 32 != w[k - 1] % 32)
        run = 1;
      else if (w[k] != w[k - 1])
        ++run;
      ways = std::max(ways, run);
    }
    ++st.passes;
    st.extra_cycles += ways - 1;
    st.max_ways = std::max(st.max_ways, ways);
  }
}

// ------------------------------------------------------------------------------- memory

bool Executor::LaneInvariant(const Expr& e) const {
  // The same value in every lane with no per-lane effect: literals, variables bound uniformly, and
  // arithmetic / casts / selects of those. Loads (race and initialisation bookkeeping per thread) and calls
  // are never taken as invariant.
  switch (e->kind) {
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm: return true;
    case ExprKind::kVar: {
      auto it = vars_.find(static_cast<const VarNode*>(e.get()));
      return it != vars_.end() && it->second.uniform;
    }
    case ExprKind::kBinary: {
      auto* b = static_cast<const BinaryNode*>(e.get());
      return LaneInvariant(b->a) && LaneInvariant(b->b);
    }
    case ExprKind::kCast: return LaneInvariant(static_cast<const CastNode*>(e.get())->value);
    case ExprKind::kNot: return LaneInvariant(static_cast<const NotNode*>(e.get())->a);
    case ExprKind::kSelect: {
      auto* n = static_cast<const SelectNode*>(e.get());
      return LaneInvariant(n->cond) && LaneInvariant(n->true_value) && LaneInvariant(n->false_value);
    }
    default: return false;
  }
}

Mem& Executor::MemOf(const BufferNode* b) {
  auto it = mems_.find(b);
  if (it == mems_.end())
    Unsupported("buffer '" + b->name + "' (" + ScopeName(b->scope) +
                    ") is neither a parameter nor allocated by the kernel",
                b->span);
  return *it->second;
}

void Executor::Locate(const Buffer& b, const std::vector<Expr>& indices, const Lanes& act, Slot* flat,
                      int64_t count) {
  Mem& m = MemOf(b.get());
  const size_t nd = indices.size();
  if (nd != m.shape.size())
    Unsupported("buffer '" + b->name + "' indexed with " + std::to_string(nd) + " indices, shape has " +
                std::to_string(m.shape.size()) + " dimensions");
  TmpScope ts(this);
  Slot* iv_small[4];
  std::vector<Slot*> iv_big(nd > 4 ? nd : 0);
  Slot** iv = nd > 4 ? iv_big.data() : iv_small;
  for (size_t d = 0; d < nd; ++d) {
    iv[d] = Tmp();
    if (act.size() > 1 && LaneInvariant(indices[d])) {  // e.g. a fragment index: once, then broadcast
      Eval(indices[d], Lanes{act[0]}, iv[d]);
      for (int t : act) iv[d][t] = iv[d][act[0]];
    } else {
      Eval(indices[d], act, iv[d]);
    }
  }
  bool int_indices = true;
  for (size_t d = 0; d < nd; ++d) int_indices &= !indices[d]->dtype.is_float();
  for (int t : act) {
    int64_t f = 0;
    bool ok = true;
    if (nd == 1 && int_indices) {  // a flat (allocated) buffer
      f = iv[0][t].i;
      ok = f >= 0 && f < m.shape[0];
    } else {
      for (size_t d = 0; d < nd; ++d) {
        int64_t i = int_indices ? iv[d][t].i : AsInt(iv[d][t], indices[d]->dtype);
        ok &= i >= 0 && i < m.shape[d];
        f = f * m.shape[d] + i;
      }
    }
    ok &= f + count <= m.n;
    flat[t].i = ok ? f : -1;
    if (!ok && opt_.check_bounds) {
      Report("out_of_bounds", t, [&] {
        std::vector<int64_t> idx;
        for (size_t d = 0; d < nd; ++d) idx.push_back(AsInt(iv[d][t], indices[d]->dtype));
        std::ostringstream os;
        os << ScopeName(b->scope) << " buffer '" << b->name << "' index [" << Join(idx) << "]";
        if (count > 1) os << " (" << count << " elements)";
        os << " outside shape [" << Join(m.shape) << "]; the access was not performed";
        return os.str();
      });
    }
  }
}

void Executor::NoteReadSlow(Mem& m, int tid, int64_t flat, bool atomic) {
  if (!m.pending.empty()) CheckPending(m, tid, flat, false);
  size_t wi = static_cast<size_t>(m.shared() ? flat : tid * m.n + flat);
  if (m.written[wi] == 0) {
    m.written[wi] = 2;  // report each never-written element once
    if (opt_.check_uninit)
      Report("uninitialized_read", tid, [&] {
        return std::string(ScopeName(m.buf->scope)) + " buffer '" + m.buf->name + "' index [" +
               std::to_string(flat) + "] is read but was never written" +
               (m.shared() ? " in this block" : " by this thread");
      });
  }
  if (!m.shared() || !opt_.check_races) return;
  Shadow& s = m.shadow[static_cast<size_t>(flat)];
  if (s.w_epoch == epoch_ && s.w_tid != tid && !(atomic && s.w_atomic) && s.reported_epoch != epoch_) {
    s.reported_epoch = epoch_;
    Report("race", tid, [&] {
      std::ostringstream os;
      os << "shared buffer '" << m.buf->name << "' index [" << flat << "] is read by thread " << tid
         << " and written by "
         << (s.w_tid < 0 ? std::string("several threads") : "thread " + std::to_string(s.w_tid))
         << " with no barrier in between";
      return os.str();
    });
  }
  if (atomic) return;  // an atomic is checked as a write
  if (s.r_epoch != epoch_) {
    s.r_epoch = epoch_;
    s.r_tid = tid;
  } else if (s.r_tid != tid) {
    s.r_tid = -2;
  }
}

void Executor::NoteWriteSlow(Mem& m, int tid, int64_t flat, bool atomic, bool init) {
  if (!m.pending.empty()) CheckPending(m, tid, flat, true);
  if (init && !m.proxy_writer.empty()) NoteGenericWrite(m, tid, flat);
  if (init) m.written[static_cast<size_t>(m.shared() ? flat : tid * m.n + flat)] = 1;
  if (!m.shared() || !opt_.check_races) return;
  Shadow& s = m.shadow[static_cast<size_t>(flat)];
  int other = -1;
  const char* what = nullptr;
  if (s.w_epoch == epoch_ && s.w_tid != tid && !(atomic && s.w_atomic)) {
    other = s.w_tid;
    what = "written";
  } else if (s.r_epoch == epoch_ && s.r_tid != tid) {
    other = s.r_tid;
    what = "read";
  }
  if (what && s.reported_epoch != epoch_) {
    s.reported_epoch = epoch_;
    Report("race", tid, [&] {
      std::ostringstream os;
      os << "shared buffer '" << m.buf->name << "' index [" << flat << "] is written by thread " << tid
         << " and " << what << " by "
         << (other < 0 ? std::string("several threads") : "thread " + std::to_string(other))
         << " with no barrier in between";
      return os.str();
    });
  }
  if (s.w_epoch == epoch_ && atomic && s.w_atomic && s.w_tid != tid)
    s.w_tid = -2;
  else
    s.w_tid = tid;
  s.w_epoch = epoch_;
  s.w_atomic = atomic;
}

void Executor::Push(const char* kind, int tid, const std::string& what) {
  std::ostringstream os;
  os << kind << ": block (" << block_[0] << ", " << block_[1] << ", " << block_[2] << ") thread " << tid
     << ": " << what;
  if (stmt_ && stmt_->span.defined()) os << "\n  at " << FormatSpan(stmt_->span);
  res_->reports.push_back({kind, os.str()});
}

Lanes Executor::FullWarps(const Lanes& act, const char* op, bool partial_ok) {
  std::vector<int> count((T_ + 31) / 32, 0);
  for (int t : act) ++count[t >> 5];
  auto lanes_of = [&](size_t w) { return partial_ok ? std::min(32, T_ - static_cast<int>(w) * 32) : 32; };
  Lanes full;
  full.reserve(act.size());
  for (int t : act)
    if (count[t >> 5] == lanes_of(t >> 5)) full.push_back(t);
  for (size_t w = 0; w < count.size(); ++w) {
    if (count[w] == 0 || count[w] == lanes_of(w)) continue;
    int first = -1;
    for (int t : act)
      if ((t >> 5) == static_cast<int>(w)) {
        first = t;
        break;
      }
    Report("inactive_lanes", first, [&] {
      return std::string(op) + " is warp-collective but only " + std::to_string(count[w]) +
             " of the 32 lanes of warp " + std::to_string(w) +
             " execute it; the warp's operation was skipped";
    });
  }
  return full;
}

}  // namespace tl::emu

// TMA in the emulator, written from NVIDIA's PTX ISA ("Tensor Copy" / cp.async.bulk.tensor, "Tensor-map")
// and the CUDA driver's description of tiled tensor maps, independently of the compiler's layout code:
//
//   tl.tma_load(&dst, &bar, tl.tensor_map(&tensor[0, ...], T.list(box...), swizzle), coords...)
//
// The tensor map. At the first use of each `tl.tensor_map` in a launch the emulator encodes, from the
// tensor argument (as the host does with cuTensorMapEncodeTiled), its own 128-byte image
// (tensor_map_image.h); the copy instruction sees only that image and the coordinates.
// The copy. The box at (c0 innermost, c1, ...) is read element by element; an element whose coordinate
// is negative or at least its dim is out of bounds and reads as zero (the fill). The box is written to
// shared memory densely (innermost fastest) from the destination address, each byte address a then
// swizzled as the ISA's swizzle modes do: 16-byte chunk bits [4, 4+b) xor address bits [7, 7+b), b = 1,
// 2, 3 for 32B, 64B, 128B. The destination must be 128-byte aligned; the box's rows must be exactly the
// swizzle's width (the only case emulated).
// Asynchrony. The copy reads global memory at issue and lands at the latest moment the ISA allows: when
// a thread waits on its mbarrier (mbarrier.try_wait.parity), which then completes its transaction bytes
// (complete_tx). Until it lands, shared memory holds the old values; at issue, a write race with
// threads that accessed the destination since the last barrier is checked. Landed bytes come from the
// async proxy (no fence.proxy.async is needed before a wgmma reads them) and are ordered by the
// mbarrier wait (no race with the threads that waited). A copy never waited for is reported when the
// block ends (tma_not_waited).
//
//   tl.tma_store(&src, tl.tensor_map(...), coords...), tl.tma_store_commit(), tl.tma_store_wait()
//
// A store reads the shared tile through the async proxy (an element whose last generic write was not
// followed by a fence.proxy.async of its writer is reported, async_proxy) and writes the box's in-bounds
// elements to global memory; it is completed at issue, so commit and wait have nothing left to do.
#include <cstring>
#include <map>

#include "emulator/executor.h"
#include "emulator/tensor_map_image.h"

namespace tl::emu {

namespace {
// *dst += *src for one element of dtype t (float: rounded to t; integer: wrapped), as a TMA reduction adds.

using MapImage = emu::MapImage;
template <typename T>
T Get(const MapImage& m, int off) {
  return MapGet<T>(m, off);
}
MapImage Encode(const uint8_t* base, const std::vector<int64_t>& shape, int eb,
                const std::vector<int64_t>& box, int swizzle, int format) {
  return EncodeTensorMap(base, shape, eb, box, swizzle, DataType::Void(), format);
}

int64_t SwizzleAddr(int64_t a, int swizzle) {
  if (!swizzle) return a;
  const int64_t b = swizzle == 128 ? 3 : swizzle == 64 ? 2 : 1;
  return a ^ (((a >> 7) & ((int64_t{1} << b) - 1)) << 4);
}
}  // namespace

struct Executor::TmaState {
  struct Copy {
    int64_t bar;  // shared byte address of the mbarrier
    Mem* dst;
    std::vector<int64_t> flat;   // destination element of each box element
    std::vector<uint8_t> bytes;  // their values (read at issue)
    int64_t tx;                  // bytes the copy completes on the barrier
    int tid;
    const StmtNode* stmt;
  };
  std::vector<Copy> pending;
  std::map<const CallNode*, MapImage> maps;  // per launch
};

void Executor::TmaBlockStart() {
  if (!tma_) tma_ = std::make_shared<TmaState>();
  tma_->pending.clear();
}

void Executor::TmaBlockEnd() {
  if (!tma_) return;
  for (auto& c : tma_->pending) {
    const StmtNode* saved = stmt_;
    stmt_ = c.stmt;
    Report("tma_not_waited", c.tid, [&] {
      return "a TMA copy into shared buffer '" + c.dst->buf->name +
             "' is still in flight when the block ends "
             "(no thread waited on its mbarrier)";
    });
    stmt_ = saved;
  }
  tma_->pending.clear();
}

int64_t Executor::TmaLand(int64_t bar) {
  if (!tma_) return 0;
  int64_t tx = 0;
  std::vector<TmaState::Copy> keep;
  for (auto& c : tma_->pending) {
    if (c.bar != bar) {
      keep.push_back(std::move(c));
      continue;
    }
    Mem& m = *c.dst;
    for (size_t i = 0; i < c.flat.size(); ++i) {
      const int64_t f = c.flat[i];
      std::memcpy(m.Addr(0, f), &c.bytes[i * static_cast<size_t>(m.esize)], static_cast<size_t>(m.esize));
      m.written[static_cast<size_t>(f)] = 1;
      if (!m.proxy_writer.empty()) m.proxy_writer[static_cast<size_t>(f)] = 0;  // the async proxy wrote it
      if (!m.shadow.empty()) m.shadow[static_cast<size_t>(f)].w_epoch = 0;      // ordered by the wait
    }
    tx += c.tx;
  }
  tma_->pending = std::move(keep);
  return tx;
}

Executor::TmaDecoded Executor::TmaMapOf(const CallNode* map, Mem& g) {
  auto bad = [&](const std::string& why) {
    TL_USER_ERROR(kUnsupported, stmt_ ? stmt_->span : Span{}, "emulator: malformed tl.tensor_map: ", why);
  };
  auto* box = As<CallNode>(map->args[1]);
  int64_t swizzle = 0, format = 0;
  if (!box || !AsConstInt(map->args[2], &swizzle)) bad("bad box or swizzle");
  if (map->args.size() == 4 && (!AsConstInt(map->args[3], &format) || (format != 1 && format != 2)))
    bad("bad format");
  // The host encodes the map once per launch (cuTensorMapEncodeTiled on a GPU).
  auto it = tma_->maps.find(map);
  if (it == tma_->maps.end()) {
    std::vector<int64_t> bx;
    for (auto& e : box->args) {
      int64_t v = 0;
      if (!AsConstInt(e, &v) || v < 1 || v > 256) bad("box extents are 1..256");
      bx.push_back(v);
    }
    if (bx.size() != g.shape.size()) bad("the box's rank is not the tensor's");
    if (reinterpret_cast<uintptr_t>(g.data) % 16)
      Report("misaligned", 0, [&] {
        return "the tensor map of '" + g.buf->name + "' needs a 16-byte aligned global address";
      });
    // (16U4_ALIGN16B / 16U6_ALIGN16B over packed fp4 / fp6: the innermost dim counts values)
    std::vector<int64_t> shape = g.shape;
    if (format) shape.back() = format == 1 ? shape.back() * 2 : shape.back() * 4 / 3;
    MapImage img = Encode(g.data, shape, g.esize, bx, static_cast<int>(swizzle), static_cast<int>(format));
    const std::string why = PackedMapProblem(img);
    if (!why.empty())
      TL_USER_ERROR(kArgument, stmt_ ? stmt_->span : Span{}, "the TMA copy of tensor '", g.buf->name, "' ",
                    why);
    it = tma_->maps.emplace(map, img).first;
  }
  // The instruction's side: everything from the image.
  const MapImage& img = it->second;
  if (Get<uint32_t>(img, 96) != kTensorMapMagic) bad("not a tensor map image");
  TmaDecoded d;
  d.r = static_cast<int>(Get<uint32_t>(img, 8));
  d.eb = static_cast<int>(Get<uint32_t>(img, 12));
  d.sw = static_cast<int>(Get<uint32_t>(img, 36));
  d.format = Get<uint8_t>(img, 103);
  d.base = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(Get<uint64_t>(img, 0)));
  d.count = 1;
  for (int i = 0; i < d.r; ++i) {
    d.dims[i] = Get<uint32_t>(img, 16 + 4 * i);
    d.strides[i] = i == 0 ? d.eb : static_cast<int64_t>(Get<uint64_t>(img, 40 + 8 * (i - 1)));
    d.bx[i] = Get<uint32_t>(img, 72 + 4 * i);
    d.count *= d.bx[i];
  }
  if (d.sw && d.bx[0] * d.eb != d.sw)
    Unsupported("TMA boxes whose rows are not exactly the swizzle width", stmt_ ? stmt_->span : Span{});
  return d;
}

// tl.tma_reduce_add: the same, adding each element into global memory (PTX ISA, cp.reduce.async.bulk.tensor
// with .add: f16, bf16, f32 and integer elements; the emulator's element adds are in the element type).
// tl.tma_store(&src, tl.tensor_map(...), coords...): reads the shared tile (an async-proxy read: each
// element's last generic write must have been fenced by its writer) and writes the in-bounds elements of
// the box to global memory. The emulator completes it at issue; commit / wait have nothing left to do.
bool Executor::ExecTmaStore(const CallNode* c, const Lanes& act) {
  if (c->op == "tl.tma_store_commit" || c->op == "tl.tma_store_wait") return true;
  const bool reduce = c->op == "tl.tma_reduce_add";
  // tl.tma_store_scatter4(&src, map, col, r0, r1, r2, r3) (.tile::scatter4): the 4 rows of K of the tile into
  // rows r0..r3, columns [col, col + K), of the tensor
  const bool s4 = c->op == "tl.tma_store_scatter4";
  auto bad = [&](const std::string& why) {
    TL_USER_ERROR(kUnsupported, stmt_ ? stmt_->span : Span{}, "emulator: malformed ", c->op, ": ", why);
  };
  auto* src = c->args.size() >= 3 ? As<BufferLoadNode>(c->args[0]) : nullptr;
  auto* map = c->args.size() >= 3 ? As<CallNode>(c->args[1]) : nullptr;
  auto* tensor =
      map && map->op == "tl.tensor_map" && map->args.size() == 3 ? As<BufferLoadNode>(map->args[0]) : nullptr;
  if (!src || !tensor) bad("expects (&src, tensor map, coordinates)");
  Mem& g = MemOf(tensor->buffer.get());
  Mem& m = MemOf(src->buffer.get());
  if (!g.global() || !m.shared()) bad("the tensor must be global and src shared");
  const TmaDecoded D = TmaMapOf(map, g);
  if (s4 && (D.r != 2 || D.bx[1] != 1 || c->args.size() != 7))
    bad("tile::scatter4 takes a 2-d map whose box is one row, a column and four rows");
  if (!s4 && static_cast<int>(c->args.size()) - 2 != D.r)
    bad("the coordinate count is not the tensor map's rank");
  if (D.eb != m.esize) bad("the source's element size differs from the tensor's");
  if (D.format) bad("a TMA store with a packed format is not emulated");
  const int64_t count = s4 ? 4 * D.bx[0] : D.count;
  TmpScope ts(this);
  Slot* sflat = Tmp();
  Locate(src->buffer, src->indices, act, sflat);
  std::vector<Slot*> co;
  for (size_t i = 2; i < c->args.size(); ++i) {
    co.push_back(Tmp());
    Eval(c->args[i], act, co.back());
  }
  const int64_t view = src->buffer->data ? src->buffer->byte_offset : 0;
  for (int t : act) {
    if (sflat[t].i < 0) continue;
    const int64_t saddr = view + sflat[t].i * D.eb;
    if (saddr % 128)
      Report("misaligned", t, [&] {
        return "the shared source of a TMA store (byte " + std::to_string(saddr) +
               ") is not 128-byte aligned";
      });
    int64_t c0[5];  // (scatter4: the column, then the four rows)
    for (int i = 0; i < (s4 ? 5 : D.r); ++i) c0[i] = co[static_cast<size_t>(s4 ? i : D.r - 1 - i)][t].i;
    bool proxy_reported = false;
    for (int64_t e = 0; e < count; ++e) {
      int64_t rest = e, off = 0;
      bool in = true;
      for (int i = 0; i < D.r; ++i) {
        const int64_t x = s4 ? (i == 0 ? c0[0] + e % D.bx[0] : c0[1 + e / D.bx[0]]) : c0[i] + rest % D.bx[i];
        rest /= D.bx[i];
        in = in && x >= 0 && x < D.dims[i];
        off += x * D.strides[i];
      }
      const int64_t f = (SwizzleAddr(saddr + e * D.eb, D.sw) - view) / D.eb;
      if (f < 0 || f >= m.n) {
        Report("out_of_bounds", t,
               [&] { return "a TMA store reads outside shared buffer '" + m.buf->name + "'"; });
        break;
      }
      NoteRead(m, t, f);
      if (int w = UnfencedGenericWriter(m, f); w && !proxy_reported) {
        proxy_reported = true;
        Report("async_proxy", t, [&] {
          return "shared buffer '" + m.buf->name + "' index [" + std::to_string(f) +
                 "] was written by thread " + std::to_string(w - 1) +
                 " (generic proxy) and is read by a TMA store (async proxy) with no fence.proxy.async by "
                 "that "
                 "thread in between";
        });
      }
      if (in && reduce)
        AddInto(D.base + off, m.Addr(0, f), g.buf->dtype);
      else if (in)
        std::memcpy(D.base + off, m.Addr(0, f), static_cast<size_t>(D.eb));
    }
  }
  return true;
}

bool Executor::ExecTma(const CallNode* c, const Lanes& act) {
  if (c->op == "tl.fence_barrier_init")
    return true;  // orders the inits for the async proxy: nothing to emulate
  if (c->op == "tl.tma_store" || c->op == "tl.tma_reduce_add" || c->op == "tl.tma_store_commit" ||
      c->op == "tl.tma_store_wait" || c->op == "tl.tma_store_scatter4")
    return ExecTmaStore(c, act);
  // tl.tma_load_2sm: TileLang's 2-CTA load (cp.async.bulk.tensor .cta_group::2): the box lands in this
  // block's shared memory and completes the barrier at the same offset in the CTA pair's even block (ranks
  // 2i, 2i + 1)
  const bool pair = c->op == "tl.tma_load_2sm";
  // tl.tma_load_gather4(&dst, &bar, map, col, r0, r1, r2, r3) (PTX ISA, cp.async.bulk.tensor .tile::gather4):
  // a 2-d map whose box is one row of K; rows r0..r3, columns [col, col + K), land as 4 consecutive rows of K
  const bool g4 = c->op == "tl.tma_load_gather4";
  if (c->op != "tl.tma_load" && !pair && !g4) return false;
  if (!tma_) TmaBlockStart();
  FiberProgress();
  auto bad = [&](const std::string& why) {
    TL_USER_ERROR(kUnsupported, stmt_ ? stmt_->span : Span{}, "emulator: malformed tl.tma_load: ", why);
  };
  if (c->args.size() < 4 || c->args.size() > 8) bad("expects (&dst, &bar, tensor map, 1-5 coordinates)");
  auto* dst = As<BufferLoadNode>(c->args[0]);
  auto* bar = As<BufferLoadNode>(c->args[1]);
  auto* map = As<CallNode>(c->args[2]);
  if (!dst || !bar || !map || map->op != "tl.tensor_map" || map->args.size() < 3 || map->args.size() > 4)
    bad("bad operands");
  auto* tensor = As<BufferLoadNode>(map->args[0]);
  if (!tensor) bad("bad tensor map");
  Mem& g = MemOf(tensor->buffer.get());
  Mem& m = MemOf(dst->buffer.get());
  Mem& bm = MemOf(bar->buffer.get());
  if (!g.global() || !m.shared() || !bm.shared()) bad("the tensor must be global, dst and bar shared");
  const TmaDecoded D = TmaMapOf(map, g);
  const int r = D.r, eb = D.eb, sw = D.sw;
  const uint8_t* gbase = D.base;
  const int64_t *dims = D.dims, *strides = D.strides, *bx = D.bx;
  const int64_t count = g4 ? 4 * D.bx[0] : D.count;
  if (g4 && (r != 2 || D.bx[1] != 1 || c->args.size() != 8))
    bad("tile::gather4 takes a 2-d map whose box is one row, a column and four rows");
  if (!g4 && static_cast<int>(c->args.size()) - 3 != r)
    bad("the coordinate count is not the tensor map's rank");
  if (eb != m.esize) bad("the destination's element size differs from the tensor's");
  TmpScope ts(this);
  Slot* dflat = Tmp();
  Slot* bflat = Tmp();
  Locate(dst->buffer, dst->indices, act, dflat);
  Locate(bar->buffer, bar->indices, act, bflat);
  std::vector<Slot*> co;
  for (size_t i = 3; i < c->args.size(); ++i) {
    co.push_back(Tmp());
    Eval(c->args[i], act, co.back());
  }
  const int64_t dview = dst->buffer->data ? dst->buffer->byte_offset : 0;
  for (int t : act) {
    if (dflat[t].i < 0 || bflat[t].i < 0) continue;
    const int64_t daddr = dview + dflat[t].i * eb;
    if (daddr % 128)
      Report("misaligned", t, [&] {
        return "the shared destination of a TMA copy (byte " + std::to_string(daddr) +
               ") is not 128-byte aligned";
      });
    CheckWgmmaReaders(daddr, daddr + count * eb, t);  // intrinsics_hopper.cc
    TmaState::Copy cp;
    cp.bar = (bar->buffer->data ? bar->buffer->byte_offset : 0) + bflat[t].i * 8;
    cp.dst = &m;
    // 16U4_ALIGN16B / 16U6_ALIGN16B: the bytes read (8 / 12 of each 16)
    cp.tx = D.format == 1 ? count / 2 : D.format == 2 ? count * 3 / 4 : count * eb;
    cp.tid = t;
    cp.stmt = stmt_;
    cp.bytes.assign(static_cast<size_t>(count * eb), 0);
    // Coordinates: the instruction lists them innermost first; the IR outermost first.
    // (gather4: the column, then the four rows, as the instruction lists them)
    int64_t c0[5];
    for (int i = 0; i < (g4 ? 5 : r); ++i) c0[i] = co[static_cast<size_t>(g4 ? i : r - 1 - i)][t].i;
    bool reported = false;
    for (int64_t e = 0; e < count; ++e) {
      int64_t rest = e, off = 0;
      bool in = true, gap = false;
      for (int i = 0; i < r; ++i) {
        const int64_t x = g4 ? (i == 0 ? c0[0] + e % bx[0] : c0[1 + e / bx[0]]) : c0[i] + rest % bx[i];
        rest /= bx[i];
        if (i == 0 && D.format) {  // a slot of a 16-value group: its packed byte, or the unwritten gap
          const int64_t b = PackedSlotByte(D.format, x);
          gap = b < 0;
          in = x >= 0 && 16 * (x / 16) < dims[0];
          off += b;
          continue;
        }
        in = in && x >= 0 && x < dims[i];
        off += x * strides[i];
      }
      if (gap) {  // not written
        cp.flat.push_back(-1);
        continue;
      }
      if (in) std::memcpy(&cp.bytes[static_cast<size_t>(e * eb)], gbase + off, static_cast<size_t>(eb));
      const int64_t a = SwizzleAddr(daddr + e * eb, sw) - dview;
      const int64_t f = a / eb;
      if (a < 0 || f >= m.n) {
        if (!reported)
          Report("out_of_bounds", t, [&] {
            return "a TMA copy writes shared byte " + std::to_string(a + dview) + ", outside buffer '" +
                   m.buf->name + "'; not written";
          });
        reported = true;
        cp.flat.push_back(-1);
        continue;
      }
      NoteWrite(m, t, f, false, /*init=*/false);  // a race with accesses since the last barrier
      cp.flat.push_back(f);
    }
    // Out-of-range destinations are dropped (their bytes still count: the transaction is the box's).
    std::vector<int64_t> flat;
    std::vector<uint8_t> bytes;
    for (size_t i = 0; i < cp.flat.size(); ++i)
      if (cp.flat[i] >= 0) {
        flat.push_back(cp.flat[i]);
        bytes.insert(bytes.end(), cp.bytes.begin() + static_cast<long>(i * eb),
                     cp.bytes.begin() + static_cast<long>((i + 1) * eb));
      }
    cp.flat = std::move(flat);
    cp.bytes = std::move(bytes);
    if (tma_multicast_) {  // .multicast::cluster: the same box at the same offsets of every block of the mask
      for (int64_t r = 0; r < 16; ++r) {
        if (!(tma_multicast_ >> r & 1)) continue;
        Executor* e = InCluster() ? ClusterPeer(r, t, "a TMA multicast (T.copy_cluster(..., cluster_mask=))")
                                  : (r == 0 ? this : nullptr);
        if (!e) continue;
        if (!e->tma_) e->TmaBlockStart();
        TmaState::Copy pc = cp;
        pc.dst = &e->MemOf(dst->buffer.get());
        e->tma_->pending.push_back(std::move(pc));
        e->FiberProgress();
      }
      ClusterProgress();
      continue;
    }
    if (pair) {  // lands when the even block waits on its barrier (the copy's destination stays this block's)
      Executor* e = ClusterSize() % 2 == 0 ? ClusterPeer(ClusterRank() & ~1, t, "a 2-CTA TMA load") : nullptr;
      if (!e) {
        if (ClusterSize() % 2)
          Report("tcgen05_pair", t, [&] {
            return std::string(
                "a 2-CTA TMA load (T.tma_copy into a cluster barrier) in a block with no CTA pair (a "
                "cluster of an even number of blocks)");
          });
        continue;
      }
      if (!e->tma_) e->TmaBlockStart();
      e->tma_->pending.push_back(std::move(cp));
      e->FiberProgress();
      ClusterProgress();
      continue;
    }
    tma_->pending.push_back(std::move(cp));
  }
  return true;
}

}  // namespace tl::emu

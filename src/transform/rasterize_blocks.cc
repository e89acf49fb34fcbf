// RasterizeBlocks; see rasterize_blocks.h.
#include "transform/rasterize_blocks.h"

#include <regex>

#include "arith/simplify.h"
#include "ir/functor.h"

namespace tl {
namespace {

Expr Div(const Expr& a, const Expr& b) { return Binary(BinaryOp::kFloorDiv, a, b); }
Expr Mod(const Expr& a, const Expr& b) { return Binary(BinaryOp::kFloorMod, a, b); }

}  // namespace

PrimFunc RasterizeBlocks(const PrimFunc& f) {
  auto it = f->attrs.find("tl.use_swizzle");
  if (it == f->attrs.end()) return f;
  std::smatch m;
  static const std::regex re("panel=([0-9]+) order=(row|col)");
  if (!std::regex_search(it->second, m, re)) return f;
  int64_t panel = std::stoll(m[1].str());
  bool by_rows = m[2].str() == "row";
  struct Mut : IRMutator {
    int64_t panel;
    bool by_rows;
    Stmt VisitKernel(const Stmt& s, const KernelNode* k) override {
      if (k->block_vars.size() < 2) return s;
      // (x, y): the launch indices; rows are y for order "row", x for "col" (the roles swap).
      const Var& vx = k->block_vars[by_rows ? 0 : 1];
      const Var& vy = k->block_vars[by_rows ? 1 : 0];
      Expr gx = k->grid[by_rows ? 0 : 1], gy = k->grid[by_rows ? 1 : 0];
      Var nx = MakeVar(vx->name, vx->dtype), ny = MakeVar(vy->name, vy->dtype);
      Var lin = MakeVar("block_linear"), rows = MakeVar("panel_rows");
      Expr P = Int(panel);
      Expr p = Div(lin, P * gx);                                                    // panel index
      Expr off = Binary(BinaryOp::kSub, Expr(lin), p * P * gx);                     // offset in the panel
      Expr rows_in = Binary(BinaryOp::kMin, P, Binary(BinaryOp::kSub, gy, p * P));  // last panel: fewer rows
      Stmt body = Substitute(k->body, {{vx.get(), nx}, {vy.get(), ny}});
      body = Let(nx, Simplify(Div(Binary(BinaryOp::kSub, Expr(lin), Simplify(p * P * gx)), rows)), body,
                 k->span);
      body = Let(ny, Simplify(p * P + Mod(off, rows)), body, k->span);
      body = Let(rows, Simplify(rows_in), body, k->span);
      body = Let(lin, Simplify(Expr(vy) * gx + Expr(vx)), body, k->span);
      return std::make_shared<KernelNode>(k->grid, k->block_vars, k->threads, k->alloc_buffers, k->var_inits,
                                          body, k->span);
    }
  } mut;
  mut.panel = panel;
  mut.by_rows = by_rows;
  auto attrs = f->attrs;
  attrs.erase("tl.use_swizzle");  // applied: the block indices below are the rasterised ones
  return MakePrimFunc(f->name, f->params, mut.VisitStmt(f->body), attrs, f->span);
}

}  // namespace tl

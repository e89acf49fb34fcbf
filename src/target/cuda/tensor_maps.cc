// CollectTensorMaps; see tensor_maps.h.
#include "target/cuda/tensor_maps.h"

#include "ir/functor.h"
#include "support/error.h"

namespace tl {

TensorMapSpec TensorMapOf(const PrimFunc& f, const CallNode* map) {
  TL_ICHECK(map && map->op == "tl.tensor_map" && (map->args.size() == 3 || map->args.size() == 4),
            "malformed tl.tensor_map");
  auto* t = As<BufferLoadNode>(map->args[0]);
  auto* box = As<CallNode>(map->args[1]);
  int64_t sw = 0;
  TL_ICHECK(t && box && box->op == "list" && AsConstInt(map->args[2], &sw), "malformed tl.tensor_map");
  TensorMapSpec s;
  for (size_t i = 0; i < f->params.size(); ++i)
    if (f->params[i].buffer == t->buffer) s.param = static_cast<int>(i);
  TL_ICHECK(s.param >= 0, "tl.tensor_map of '" + t->buffer->name + "', which is not a kernel parameter");
  s.dtype = t->buffer->dtype;
  for (auto& e : box->args) {
    int64_t v = 0;
    TL_ICHECK(AsConstInt(e, &v), "tl.tensor_map: the box is not constant");
    s.box.push_back(v);
  }
  s.swizzle_bytes = static_cast<int>(sw);
  int64_t fmt = 0;
  if (map->args.size() == 4)
    TL_ICHECK(AsConstInt(map->args[3], &fmt) && (fmt == 1 || fmt == 2), "malformed tl.tensor_map");
  s.format = static_cast<int>(fmt);
  return s;
}

int TensorMapIndex(const std::vector<TensorMapSpec>& maps, const TensorMapSpec& m) {
  for (size_t i = 0; i < maps.size(); ++i)
    if (maps[i].param == m.param && maps[i].box == m.box && maps[i].swizzle_bytes == m.swizzle_bytes &&
        maps[i].format == m.format)
      return static_cast<int>(i);
  return -1;
}

std::vector<TensorMapSpec> CollectTensorMaps(const PrimFunc& f) {
  std::vector<TensorMapSpec> out;
  struct V : IRVisitor {
    const PrimFunc* f;
    std::vector<TensorMapSpec>* out;
    void VisitCall(const CallNode* n) override {
      if (n->op == "tl.tensor_map") {
        TensorMapSpec s = TensorMapOf(*f, n);
        if (TensorMapIndex(*out, s) < 0) out->push_back(s);
        return;
      }
      IRVisitor::VisitCall(n);
    }
  } v;
  v.f = &f;
  v.out = &out;
  v.VisitStmt(f->body);
  return out;
}

}  // namespace tl

// OpenCL sub-groups in the emulator, written from the Khronos OpenCL C specification (cl_khr_subgroups,
// "Sub-group functions"), not from the lowering:
//   get_sub_group_id()        which sub-group of the work-group the work-item is in, 0 .. num - 1
//   get_sub_group_local_id()  its index within that sub-group
//   get_num_sub_groups()      the work-group's sub-group count
//   sub_group_reduce_<op>(x)  op (add, max, min) over x of every work-item of the sub-group, returned to
//                             each of them; all of them must reach the call (else undefined)
// The specification leaves the sub-group size and which work-items form a sub-group to the
// implementation. The emulator models one (Options::subgroup_size, Options::subgroup_strided) so
// that tests can run a kernel under several and show that it assumes none: contiguous sub-groups of
// `size` work-items (the last one smaller when the size does not divide the work-group), or strided
// ones (work-item t is in sub-group t % num). A reduction combines in local-id order, rounding each
// step to the value's type.
#include <cmath>

#include "emulator/executor.h"

namespace tl::emu {
namespace {

[[noreturn]] void Bad(const CallNode* c, const std::string& why) {
  TL_USER_ERROR(kUnsupported, Span{}, "emulator: malformed call of ", c->op, ": ", why);
}

Slot Combine(const std::string& how, DataType t, Slot a, Slot b) {
  Slot r;
  if (t.is_float()) {
    double x = how == "add" ? a.f + b.f : how == "max" ? std::fmax(a.f, b.f) : std::fmin(a.f, b.f);
    r.f = RoundFloat(x, t);
  } else if (how == "add") {
    r.i = WrapInt(static_cast<int64_t>(static_cast<uint64_t>(a.i) + static_cast<uint64_t>(b.i)), t);
  } else {
    bool less =
        t.is_uint() && t.bits() == 64 ? static_cast<uint64_t>(a.i) < static_cast<uint64_t>(b.i) : a.i < b.i;
    r = (how == "max") == less ? b : a;
  }
  return r;
}

}  // namespace

bool Executor::EvalSubgroup(const CallNode* c, const Lanes& act, Slot* out) {
  const std::string& op = c->op;
  if (op != "tl.subgroup_id" && op != "tl.subgroup_local_id" && op != "tl.num_subgroups" &&
      op != "tl.subgroup_reduce")
    return false;
  const int size = opt_.subgroup_size;
  if (size < 1) Unsupported("the emulated sub-group size must be at least 1, got " + std::to_string(size));
  const int num = (T_ + size - 1) / size;
  auto group = [&](int t) { return opt_.subgroup_strided ? t % num : t / size; };
  auto local = [&](int t) { return opt_.subgroup_strided ? t / num : t % size; };
  if (op == "tl.subgroup_id" || op == "tl.subgroup_local_id" || op == "tl.num_subgroups") {
    for (int t : act)
      out[t].i = op == "tl.num_subgroups" ? num : op == "tl.subgroup_id" ? group(t) : local(t);
    return true;
  }
  auto* how = c->args.size() == 2 ? As<StringImmNode>(c->args[1]) : nullptr;
  if (!how || (how->value != "add" && how->value != "max" && how->value != "min"))
    Bad(c, "expects (value, \"add\" | \"max\" | \"min\")");
  DataType t = c->dtype;
  TmpScope ts(this);
  Slot* v = Tmp();
  Eval(c->args[0], act, v);
  if (c->args[0]->dtype != t)
    for (int l : act) v[l] = Convert(v[l], c->args[0]->dtype, t);
  // members[g]: the work-items of sub-group g in local-id order; the active ones are marked.
  std::vector<std::vector<int>> members(num);
  for (int l = 0; l < T_; ++l) members[group(l)].push_back(l);
  std::vector<char> on(T_, 0);
  for (int l : act) on[l] = 1;
  for (int g = 0; g < num; ++g) {
    auto& m = members[g];
    int active = 0;
    for (int l : m) active += on[l];
    if (active == 0) continue;
    if (active < static_cast<int>(m.size())) {
      int first = -1;
      for (int l : m)
        if (on[l]) {
          first = l;
          break;
        }
      Report("inactive_lanes", first, [&] {
        return "sub_group_reduce_" + how->value + " is sub-group-collective but only " +
               std::to_string(active) + " of the " + std::to_string(m.size()) + " work-items of sub-group " +
               std::to_string(g) + " execute it; the sub-group's operation was skipped";
      });
      for (int l : m)
        if (on[l]) out[l].i = 0;
      continue;
    }
    Slot acc = v[m[0]];
    for (size_t i = 1; i < m.size(); ++i) acc = Combine(how->value, t, acc, v[m[i]]);
    for (int l : m) out[l] = acc;
  }
  return true;
}

}  // namespace tl::emu

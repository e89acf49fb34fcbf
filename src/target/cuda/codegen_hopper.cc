// CUDA code generation of the Hopper intrinsics; see codegen_hopper.h.
#include "target/cuda/codegen_hopper.h"

#include "arith/simplify.h"
#include "support/error.h"

namespace tl {

bool HopperCallE(const CallNode* c, const std::function<std::string(const Expr&)>& print,
                 const std::function<std::string(const Expr&)>& shared_addr, std::string* out) {
  const std::string& op = c->op;
  if (op == "tl.wgmma_fence") {
    *out = "tl::wgmma_fence()";
  } else if (op == "tl.wgmma_commit") {
    *out = "tl::wgmma_commit()";
  } else if (op == "tl.wgmma_wait") {
    *out = "tl::wgmma_wait<" + print(c->args.at(0)) + ">()";
  } else if (op == "tl.mbarrier_init" || op == "tl.mbarrier_expect_tx" || op == "tl.mbarrier_wait_parity" ||
             op == "tl.mbarrier_arrive_expect_tx") {
    // in loops the barrier is a 32-bit shared address (no cvta per use); its init, once, names it
    const std::string bar =
        op == "tl.mbarrier_init" ? "&" + print(c->args.at(0)) : shared_addr(c->args.at(0));
    *out = "tl::" + op.substr(3) + "(" + bar + ", " + print(c->args.at(1)) + ")";
  } else if (op == "tl.mbarrier_arrive") {
    *out = "tl::mbarrier_arrive(" + shared_addr(c->args.at(0)) + ")";
  } else if (op == "tl.mbarrier_cp_async_arrive_noinc") {  // T.cp_async_barrier_noinc
    *out = "tl::cp_async_mbarrier_arrive_noinc(" + shared_addr(c->args.at(0)) + ")";
  } else if (op == "tl.set_max_nreg") {  // (count, inc): immediates
    *out = "asm volatile(\"setmaxnreg." + std::string(IsConstInt(c->args.at(1), 1) ? "inc" : "dec") +
           ".sync.aligned.u32 " + print(c->args.at(0)) + ";\\n\" ::: \"memory\")";
  } else if (op == "tl.named_barrier_sync") {  // (id, threads): immediates (warp specialisation)
    *out = "asm volatile(\"bar.sync " + print(c->args.at(0)) + ", " + print(c->args.at(1)) +
           ";\\n\" ::: \"memory\")";
  } else if (op == "tl.fence_proxy_async") {
    *out = "tl::fence_proxy_async()";
  } else if (op == "tl.wgmma_desc") {  // (shared operand, lbo, sbo, mode) -> uint64
    *out = "tl::wgmma_desc(" + shared_addr(c->args.at(0)) + ", " + print(c->args.at(1)) + ", " +
           print(c->args.at(2)) + ", " + print(c->args.at(3)) + ")";
  } else if (op == "tl.wgmma_desc_add") {  // (descriptor, 16-byte units, per warp group: 0/1)
    *out = std::string(IsConstInt(c->args.at(2), 1) ? "tl::wgmma_desc_add_lo(" : "tl::wgmma_desc_add(") +
           print(c->args.at(0)) + ", " + print(c->args.at(1)) + ")";
  } else if (op == "tl.wgmma" || op == "tl.wgmma_rs") {
    // (shape "m64nNk16" / "m64nNk32", ab "f16"/"bf16"/"<a>_<b>", descA, descB, C operand, scale_d, trans_a,
    // trans_b)
    // wgmma_rs: (shape, ab, A registers (8 16-bit elements), descB, C operand, scale_d, trans_b)
    const bool rs = op == "tl.wgmma_rs";
    auto* shape = As<StringImmNode>(c->args.at(0));
    auto* ab = As<StringImmNode>(c->args.at(1));
    auto* acc = As<BufferLoadNode>(c->args.at(4));
    auto* areg = rs ? As<BufferLoadNode>(c->args.at(2)) : nullptr;
    int64_t ta = 0, tb = 0, n = 0;
    TL_ICHECK(shape && ab && acc && acc->indices.size() == 1 && (rs || AsConstInt(c->args.at(6), &ta)) &&
                  AsConstInt(c->args.at(rs ? 6 : 7), &tb) && (!rs || (areg && areg->indices.size() == 1)),
              "malformed tl.wgmma call");
    int64_t k = 0;
    TL_ICHECK(
        std::sscanf(shape->value.c_str(), "m64n%ldk%ld", &n, &k) == 2 && n % 8 == 0 && n >= 8 && n <= 256,
        "tl.wgmma: bad shape ", shape->value);
    // ab: "f16" / "bf16" (A and B alike), or "<a>_<b>" for fp8 (.e4m3 / .e5m2, k32), whose operands are
    // K-major with no transpose immediates in the PTX ISA.
    // "<a>_<b>" with .s8 / .u8 (k32) accumulates into .s32, with no scale immediates in the PTX ISA.
    const size_t us = ab->value.find('_');
    const bool f8 = us != std::string::npos;
    const bool i8 = f8 && (ab->value[0] == 's' || ab->value[0] == 'u');
    const std::string types =
        f8 ? ab->value.substr(0, us) + "." + ab->value.substr(us + 1) : ab->value + "." + ab->value;
    TL_ICHECK(!f8 || (ta == 0 && tb == 0 && k == 32), "tl.wgmma: 8-bit operands must be K-major");
    const std::string trans = f8 ? "" : ", " + std::to_string(ta) + ", " + std::to_string(tb);
    const std::string scales = i8 ? "" : ", 1, 1";
    int64_t regs = n / 2;
    std::string s = "asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %" + std::to_string(regs + 2) +
                    ", 0;\\nwgmma.mma_async.sync.aligned." + shape->value + (i8 ? ".s32." : ".f32.") + types +
                    " {";
    for (int64_t r = 0; r < regs; ++r) s += (r ? ", %" : "%") + std::to_string(r);
    if (rs) {  // A: four .b32 registers {%regs .. %regs+3}, descB %regs+4, scale-d %regs+5
      // (8-bit types: no transpose immediate; integer ones no scale immediates either)
      s = "asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %" + std::to_string(regs + 5) +
          ", 0;\\nwgmma.mma_async.sync.aligned." + shape->value + (i8 ? ".s32." : ".f32.") + types + " {";
      for (int64_t r = 0; r < regs; ++r) s += (r ? ", %" : "%") + std::to_string(r);
      s += "}, {%" + std::to_string(regs) + ", %" + std::to_string(regs + 1) + ", %" +
           std::to_string(regs + 2) + ", %" + std::to_string(regs + 3) + "}, %" + std::to_string(regs + 4) +
           ", p" + scales + (f8 ? "" : ", " + std::to_string(tb)) + ";\\n}\\n\" : ";
    } else {
      s += "}, %" + std::to_string(regs) + ", %" + std::to_string(regs + 1) + ", p" + scales + trans +
           ";\\n}\\n\" : ";
    }
    for (int64_t r = 0; r < regs; ++r) {
      Expr e = Load(acc->buffer, {Simplify(acc->indices[0] + Int(r))});
      s += std::string(r ? ", " : "") + (i8 ? "\"+r\"(" : "\"+f\"(") + print(e) + ")";
    }
    s += " : ";
    if (rs) {  // four .b32 registers of A: 2 16-bit or 4 8-bit elements each
      const int per = 4 / areg->buffer->dtype.bytes();
      for (int q = 0; q < 4; ++q)
        s += "\"r\"(*reinterpret_cast<const uint32_t*>(&" +
             print(Load(areg->buffer, {Simplify(areg->indices[0] + Int(per * q))})) + ")), ";
    } else {
      s += "\"l\"(" + print(c->args.at(2)) + "), ";
    }
    s += "\"l\"(" + print(c->args.at(3)) + "), \"r\"((int)(" + print(c->args.at(5)) + ")))";
    *out = s;
  } else {
    return false;
  }
  return true;
}

}  // namespace tl

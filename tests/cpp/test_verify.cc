// The IR verifier (ir/verify.h): each invariant it promises fires on a function that breaks it,
// and well-formed functions pass.
#include <gtest/gtest.h>

#include <string>

#include "ir/verify.h"
#include "support/error.h"

namespace tl {
namespace {

Buffer Global(const std::string& n) { return MakeBuffer(n, DataType::Float(32), {Int(64)}, Scope::kGlobal); }

PrimFunc Kernel(std::vector<Buffer> allocs, Stmt body, std::vector<Param> params = {}) {
  auto k = std::make_shared<KernelNode>(std::vector<Expr>{Int(1)}, std::vector<Var>{MakeVar("bx")},
                                        std::vector<Expr>{Int(32)}, std::move(allocs),
                                        std::vector<std::pair<Buffer, Expr>>{}, std::move(body), Span{});
  return MakePrimFunc("k", std::move(params), k);
}

std::string Violation(const PrimFunc& f, IRStage stage) {
  try {
    VerifyIR(f, stage, "TestPass");
  } catch (const InternalError& e) {
    return e.what();
  }
  return "";
}

TEST(VerifyIRTest, AcceptsWellFormedThreadLevelIR) {
  Buffer A = Global("A");
  Buffer smem = MakeBuffer("smem", DataType::UInt(8), {Int(512)}, Scope::kShared);
  Buffer S = MakeBufferView(MakeBuffer("S", DataType::Float(32), {Int(64)}, Scope::kShared), smem, 256);
  Var i = MakeVar("i");
  Stmt body = For(i, Int(0), Int(64), ForKind::kSerial, Store(S, Load(A, {i}), {i}));
  EXPECT_EQ(Violation(Kernel({smem, S}, body, {{MakeVar("A"), A}}), IRStage::kSharedPlanned), "");
}

TEST(VerifyIRTest, IndexArity) {
  Buffer A = Global("A");
  Stmt body = Store(A, FloatImm(DataType::Float(32), 1.0), {Int(0), Int(0)});
  std::string v = Violation(Kernel({}, body, {{MakeVar("A"), A}}), IRStage::kTile);
  EXPECT_NE(v.find("IR verifier after TestPass: buffer 'A' of rank 1 is indexed with 2 indices"),
            std::string::npos)
      << v;
}

TEST(VerifyIRTest, UnknownAndTwiceAllocatedBuffers) {
  Buffer A = Global("A");
  Stmt body = Store(A, FloatImm(DataType::Float(32), 1.0), {Int(0)});
  EXPECT_NE(Violation(Kernel({}, body), IRStage::kTile).find("neither a parameter nor allocated"),
            std::string::npos);
  Buffer L = MakeBuffer("L", DataType::Float(32), {Int(4)}, Scope::kLocal);
  EXPECT_NE(Violation(Kernel({L, L}, Evaluate(Int(0))), IRStage::kTile).find("allocated twice"),
            std::string::npos);
}

TEST(VerifyIRTest, ThreadLevelHasNoTileOpsOrFragments) {
  Buffer F = MakeBuffer("F", DataType::Float(32), {Int(8), Int(8)}, Scope::kFragment);
  Stmt fill = std::make_shared<FillNode>(Region::Full(F), FloatImm(DataType::Float(32), 0.0), Span{});
  EXPECT_EQ(Violation(Kernel({F}, fill), IRStage::kTile), "");
  std::string v = Violation(Kernel({F}, fill), IRStage::kThread);
  EXPECT_NE(v.find("fragment 'F' is left in thread-level IR"), std::string::npos) << v;
  Buffer L = MakeBuffer("L", DataType::Float(32), {Int(4)}, Scope::kLocal);
  Var i = MakeVar("i");
  Stmt par = For(i, Int(0), Int(4), ForKind::kParallel, Store(L, FloatImm(DataType::Float(32), 0.0), {i}));
  EXPECT_NE(Violation(Kernel({L}, par), IRStage::kThread).find("T.Parallel loop is left"), std::string::npos);
}

TEST(VerifyIRTest, PlannedSharedBuffersAreViewsInsideTheByteBuffer) {
  Buffer smem = MakeBuffer("smem", DataType::UInt(8), {Int(256)}, Scope::kShared);
  Buffer S = MakeBuffer("S", DataType::Float(32), {Int(64)}, Scope::kShared);
  std::string v = Violation(Kernel({smem, S}, Evaluate(Int(0))), IRStage::kSharedPlanned);
  EXPECT_NE(v.find("shared buffer 'S' was not placed by the plan"), std::string::npos) << v;
  Buffer out = MakeBufferView(S, smem, 16);  // 16 + 256 bytes > 256
  v = Violation(Kernel({smem, out}, Evaluate(Int(0))), IRStage::kSharedPlanned);
  EXPECT_NE(v.find("outside the shared byte buffer"), std::string::npos) << v;
  Buffer odd = MakeBufferView(MakeBuffer("T", DataType::Float(32), {Int(4)}, Scope::kShared), smem, 8);
  v = Violation(Kernel({smem, odd}, Evaluate(Int(0))), IRStage::kSharedPlanned);
  EXPECT_NE(v.find("misaligned"), std::string::npos) << v;
}

}  // namespace
}  // namespace tl

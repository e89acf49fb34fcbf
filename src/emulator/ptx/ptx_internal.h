// Internal to the PTX emulator: the decoded form of a PTX module (ptx_parse.cc builds it once; ptx_exec.cc
// runs it). Every instruction keeps its opcode, types and modifiers as enums and its operands as register
// indices, immediates and resolved symbols, so that execution never looks at text.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "emulator/ptx/ptx.h"

namespace tl::emu::ptx {

// a table:
// clang-format off
enum class Op : uint8_t {
  kMov, kLd, kSt, kCvta, kCvt, kAdd, kSub, kMul, kMad, kFma, kDiv, kRem, kAbs, kNeg, kMin, kMax, kAnd, kOr,
  kXor, kNot, kCnot, kShl, kShr, kSetp, kSelp, kBra, kRet, kExit, kBar, kBarWarp, kCpAsync, kCpAsyncCommit,
  kCpAsyncWait, kCpAsyncWaitAll, kLdmatrix, kMma, kShfl, kVote, kEx2, kLg2, kRcp, kSqrt, kRsqrt, kSin, kCos,
  kTanh, kAtom, kRed, kFence, kPopc, kClz, kBrev, kBfe, kBfi, kPrmt, kShf, kLop3, kCopysign, kTestp, kActivemask,
  kNop,
  // sm_90: mbarriers, TMA, wgmma, stmatrix
  kMbarInit, kMbarArrive, kMbarExpectTx, kMbarTryWait, kTmaLoad, kTmaStore, kBulkCommit, kBulkWait, kWgmma,
  kWgmmaFence, kWgmmaCommit, kWgmmaWait, kStmatrix, kElect, kDp4a,
  // calls (device functions are inlined at parse time; what remains is an external function: vprintf), trap,
  // fence.proxy.async
  kCall, kTrap, kFenceProxyAsync,
  kTmaReduce,         // cp.reduce.async.bulk.tensor .add
  kCpAsyncMbarArrive, // cp.async.mbarrier.arrive{.noinc}
  // sm_100a: tensor memory
  kTcAlloc, kTcDealloc, kTcRelinquish, kTcMma, kTcCommit, kTcLd, kTcSt, kTcCp,
  // sm_90 thread-block clusters: barrier.cluster.arrive / .wait, mapa
  kClusterArrive, kClusterWait, kMapa,
  // sm_100 cluster launch control: clusterlaunchcontrol.try_cancel / .query_cancel
  kClcTryCancel, kClcQuery
};
// clang-format on

enum class Ty : uint8_t {
  kNone,
  kB8,
  kB16,
  kB32,
  kB64,
  kB128,
  kU8,
  kU16,
  kU32,
  kU64,
  kS8,
  kS16,
  kS32,
  kS64,
  kF16,
  kF16x2,
  kBF16,
  kBF16x2,
  kF32,
  kF64,
  kPred,
  kTf32,
  kE4M3,
  kE5M2,
  kE4M3x2,
  kE5M2x2,
  kE2M1,  // block-scaled mma operand and scale types (not register types)
  kE2M3,
  kE3M2,
  kUE4M3,
  kUE8M0
};
inline int TyBits(Ty t) {
  switch (t) {
    case Ty::kB8: case Ty::kU8: case Ty::kS8: case Ty::kE4M3: case Ty::kE5M2: return 8;
    case Ty::kB16: case Ty::kU16: case Ty::kS16: case Ty::kF16: case Ty::kBF16: case Ty::kE4M3x2:
    case Ty::kE5M2x2: return 16;
    case Ty::kB32: case Ty::kU32: case Ty::kS32: case Ty::kF32: case Ty::kF16x2: case Ty::kBF16x2:
    case Ty::kTf32: return 32;
    case Ty::kB64: case Ty::kU64: case Ty::kS64: case Ty::kF64: return 64;
    case Ty::kB128: return 128;
    case Ty::kPred: return 1;
    default: return 0;
  }
}
// f16, bf16, f32, f64, tf32, fp8 (scalar float formats); s8..s64
inline bool TyFloat(Ty t) {
  return t == Ty::kF16 || t == Ty::kBF16 || t == Ty::kF32 || t == Ty::kF64 || t == Ty::kTf32 || t == Ty::kE4M3 ||
         t == Ty::kE5M2;
}
inline bool TySigned(Ty t) { return t == Ty::kS8 || t == Ty::kS16 || t == Ty::kS32 || t == Ty::kS64; }
const char* TyName(Ty t);

enum class Space : uint8_t { kGeneric, kGlobal, kShared, kParam, kLocal, kConst };

enum class Sreg : uint8_t {
  kTidX,
  kTidY,
  kTidZ,
  kNtidX,
  kNtidY,
  kNtidZ,
  kCtaidX,
  kCtaidY,
  kCtaidZ,
  kNctaidX,
  kNctaidY,
  kNctaidZ,
  kLaneid,
  kWarpid,
  kNwarpid,
  kSmid,
  kClock,
  kClock64,
  kLanemaskEq,
  kLanemaskLt,
  kLanemaskLe,
  kLanemaskGt,
  kLanemaskGe,
  kDynSmem,
  kTotalSmem,
  kGlobalTimer,
  kEnvreg1,
  kEnvreg2,  // the cooperative launch's grid workspace address (high, low 32 bits): T.sync_grid
  // thread-block clusters (sm_90)
  kClusterCtarank,
  kClusterNctarank,
  kClusterCtaidX,
  kClusterCtaidY,
  kClusterCtaidZ,
  kClusterNctaidX,
  kClusterNctaidY,
  kClusterNctaidZ,
  kClusteridX,
  kClusteridY,
  kClusteridZ,
  kNclusteridX,
  kNclusteridY,
  kNclusteridZ,
  kIsExplicitCluster
};

enum class Cmp : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe, kLo, kLs, kHi, kHs, kEqu, kNeu, kLtu, kLeu, kGtu, kGeu,
                           kNum, kNan };
enum class Rnd : uint8_t { kNone, kRn, kRz, kRm, kRp, kRni, kRzi, kRmi, kRpi, kRna };

struct Operand {
  enum Kind : uint8_t { kNone, kReg, kImmInt, kImmF32Bits, kImmF64Bits, kImmDouble, kSreg, kAddr, kVec, kSym,
                        kLabel, kSink };
  Kind kind = kNone;
  bool neg = false;   // !%p (a negated predicate source)
  int reg = -1;       // kReg; kAddr: base register or -1
  int sym = -1;       // kSym / kAddr: a symbol of the module (its address in its state space)
  Sreg sreg = Sreg::kTidX;
  int64_t imm = 0;    // kImmInt value, kImmF32Bits / kImmF64Bits bits, kAddr byte offset
  double dbl = 0;     // kImmDouble
  int pred_out = -1;  // `d|p`: the second destination (a predicate register)
  std::vector<Operand> vec;  // kVec elements
};

struct Instr {
  Op op = Op::kNop;
  Ty t = Ty::kNone, t2 = Ty::kNone;  // the type; cvt / mma: the second (source / operand) type
  Space space = Space::kGeneric, space2 = Space::kGeneric;  // cvta / cp.async: the other state space
  uint8_t vec = 1;                    // .v2 / .v4
  Cmp cmp = Cmp::kEq;
  uint8_t boolop = 0;                 // setp: 0 none, 1 .and, 2 .or, 3 .xor
  Rnd rnd = Rnd::kNone;
  bool ftz = false, sat = false, approx = false, wide = false, hi = false, trans = false, to = false;
  uint8_t mode = 0;  // shfl: 0 up 1 down 2 bfly 3 idx; ldmatrix: matrices; atom: see ptx_exec; vote: 0 any 1
                     // all 2 uni 3 ballot; mma: 1 kind::mxf4nvf4.block_scale.scale_vec::4X, 2
                     // kind::mxf8f6f4.block_scale.scale_vec::1X (t2: the scale type)
  int m = 0, n = 0, k = 0;             // mma shape
  Ty ta = Ty::kNone, tb = Ty::kNone, tc = Ty::kNone;  // mma operand types (d is t)
  bool zero_fill_pred = false;         // cp.async: the 4th operand is an ignore-src predicate
  bool cc_in = false, cc_out = false;  // addc / subc / madc read the carry flag; .cc writes it
  bool spin = false;                   // ld.acquire / .relaxed / .volatile: a load other blocks may answer
  bool expect_tx = false;              // mbarrier.arrive.expect_tx
  bool cluster_addr = false;           // mbarrier.arrive .shared::cluster: the address may be a peer block's
  int dims = 0;                        // cp.async.bulk.tensor.Nd
  bool pair = false;                   // .cta_group::2 (tcgen05, cp.async.bulk.tensor): a CTA pair
  int guard = -1;                      // @%p
  bool guard_neg = false;              // @!%p
  std::vector<Operand> ops;
  int target = -1;                     // bra: instruction index
  int line = 0;                        // PTX line
  int loc_file = -1, loc_line = 0;     // the preceding .loc
  std::string text;                    // as written, for messages
  std::string callee;                  // call: the function (ops[0]: {return params}, ops[1]: {arguments})
};

struct Symbol {
  std::string name;
  Space space = Space::kGeneric;
  int64_t offset = 0;  // in its state space: shared / param / local bytes
  int64_t bytes = 0;
  int64_t count = 1;      // elements (of its declared type)
  bool external = false;  // `.extern .shared` (the dynamic shared array)
};

struct Kernel {
  std::string name;
  std::vector<int> params;   // symbols of the .param list, in order
  int64_t param_bytes = 0;
  int64_t local_bytes = 0;   // .local arrays (per thread)
  std::vector<Ty> reg_types; // one a register
  std::vector<Instr> code;
  std::array<int64_t, 3> reqntid{0, 0, 0};
  std::array<int64_t, 3> cluster{1, 1, 1};  // .reqnctapercluster (blocks per cluster)
  bool explicit_cluster = false;            // .explicitcluster
  bool is_func = false;   // a .func (inlined into its callers), not an .entry
  std::vector<int> rets;  // .func: symbols of its return parameters
};

struct Module {
  std::vector<Symbol> symbols;  // module- and function-scope
  int64_t static_shared = 0;    // bytes of the non-extern .shared variables (the extern array follows)
  int64_t global_bytes = 0;     // module-scope .global / .const variables (one copy a launch)
  std::vector<uint8_t> global_init;  // their initial bytes (global_bytes of them; zero where not initialised)
  int64_t extern_shared_align = 16;
  std::vector<int> extern_shared;  // symbols of `.extern .shared` arrays (all at static_shared, aligned)
  std::vector<Kernel> kernels;
  std::map<int, std::string> files;  // .file
  const Kernel* Find(const std::string& name) const {
    for (const Kernel& k : kernels)
      if (k.name == name && !k.is_func) return &k;
    return nullptr;
  }
};

}  // namespace tl::emu::ptx

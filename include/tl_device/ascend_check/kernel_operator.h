// OUR declarations of the part of the public AscendC API that TileLang-C++'s Ascend code generator uses,
// written from Huawei's public API reference (docs/ascend.md), so that clang can check the generated source's
// syntax and types without CANN. This is not CANN's header and implements nothing: a CANN install provides the
// real `kernel_operator.h`, and the generated code is built against that.
#pragma once
#include <cstdint>

#define __aicore__
#define __global__
#define __gm__
using GM_ADDR = uint8_t*;

struct half {
  half() = default;
  half(float);
  operator float() const;
};
struct bfloat16_t {
  bfloat16_t() = default;
  bfloat16_t(float);
  operator float() const;
};

enum pipe_t { PIPE_S, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_FIX, PIPE_ALL };
// Which core this copy of a mixed kernel runs on (CANN compiles a mixed kernel once per core type).
#define ASCEND_IS_AIC (AscendC::TlCoreIsCube())
#define ASCEND_IS_AIV (!AscendC::TlCoreIsCube())
enum event_t { EVENT_ID0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };
enum class QuantMode_t { NoQuant, F322F16, F322BF16 };

namespace AscendC {

enum class TPosition { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC };
// Pipe pairs a flag orders: the first pipe sets, the second waits.
enum class HardEvent {
  MTE2_MTE1, MTE1_MTE2, MTE1_M, M_MTE1, M_FIX, FIX_M, MTE2_M, M_MTE2, MTE2_FIX, FIX_MTE2, MTE1_FIX, FIX_MTE1,
  MTE2_V, V_MTE2, V_MTE3, MTE3_V, MTE2_MTE3, MTE3_MTE2, M_V, V_M, MTE1_V, V_MTE1, FIX_V, V_FIX,
  MTE1_MTE3, MTE3_MTE1, M_MTE3, MTE3_M, FIX_MTE3, MTE3_FIX,
  V_S, S_V, MTE2_S, S_MTE2, MTE3_S, S_MTE3, MTE1_S, S_MTE1, M_S, S_M, FIX_S, S_FIX
};
enum class RoundMode { CAST_NONE, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD };

int64_t GetBlockIdx();
int64_t GetBlockNum();
int64_t GetSubBlockIdx();
int64_t GetTaskRation();
bool TlCoreIsCube();  // (our stand-in for what CANN's ASCEND_IS_AIC tests)
// Flags between a cube core and its vector cores: the set is queued on `pipe` of the setting core.
template <uint8_t mode, pipe_t pipe>
void CrossCoreSetFlag(uint16_t flagId);
void CrossCoreWaitFlag(uint16_t flagId);

template <HardEvent E>
void SetFlag(int32_t eventId);
template <HardEvent E>
void WaitFlag(int32_t eventId);

template <typename T>
class GlobalTensor {
 public:
  void SetGlobalBuffer(__gm__ T* buffer);
  GlobalTensor operator[](uint64_t offset) const;
  T GetValue(uint64_t offset) const;
};

template <typename T>
class LocalTensor {
 public:
  LocalTensor operator[](uint32_t offset) const;
  T GetValue(uint32_t offset) const;
};

template <TPosition P>
class TBuf {
 public:
  template <typename T>
  LocalTensor<T> Get();
};

class TPipe {
 public:
  template <TPosition P>
  void InitBuffer(TBuf<P>& buf, uint32_t bytes);
};

struct Nd2NzParams {
  uint16_t ndNum, nValue, dValue, srcNdMatrixStride, srcDValue, dstNzC0Stride, dstNzNStride, dstNzMatrixStride;
};
struct LoadData2DParams {
  uint16_t startIndex;
  uint8_t repeatTimes;
  uint16_t srcStride;
  uint8_t sid;
  uint16_t dstGap;
  bool ifTranspose;
  uint8_t addrMode;
};
struct MmadParams {
  uint16_t m, n, k;
  bool isBias;
  int32_t fmOffset;
  bool enSsparse, enWinogradA, enWinogradB;
  uint8_t unitFlag;
  bool kDirectionAlign, cmatrixSource, cmatrixInitVal;
};
struct FixpipeParamsV220 {
  uint16_t nSize, mSize, srcStride;
  uint32_t dstStride;
  QuantMode_t quantPre;
  bool reluEn, nz2ndEn;
};
struct DataCopyExtParams {
  uint16_t blockCount;
  uint32_t blockLen, srcStride, dstStride, rsv;
};
template <typename T>
struct DataCopyPadExtParams {
  bool isPad;
  uint8_t leftPadding, rightPadding;
  T paddingValue;
};

template <typename T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& params);
template <typename T>
void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2DParams& params);
template <typename C, typename A, typename B>
void Mmad(const LocalTensor<C>& dst, const LocalTensor<A>& fm, const LocalTensor<B>& filter, const MmadParams& params);
template <typename T, typename U>
void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& params);
template <typename T>
void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& params,
                 const DataCopyPadExtParams<T>& pad);
template <typename T>
void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& params);

#define TL_ASCEND_BINARY(name)                                                                              \
  template <typename T>                                                                                    \
  void name(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, const int32_t& count);
TL_ASCEND_BINARY(Add)
TL_ASCEND_BINARY(Sub)
TL_ASCEND_BINARY(Mul)
TL_ASCEND_BINARY(Div)
TL_ASCEND_BINARY(Max)
TL_ASCEND_BINARY(Min)
#define TL_ASCEND_SCALAR(name) \
  template <typename T>        \
  void name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalar, const int32_t& count);
TL_ASCEND_SCALAR(Adds)
TL_ASCEND_SCALAR(Muls)
TL_ASCEND_SCALAR(Maxs)
TL_ASCEND_SCALAR(Mins)
#define TL_ASCEND_UNARY(name) \
  template <typename T>       \
  void name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count);
TL_ASCEND_UNARY(Exp)
TL_ASCEND_UNARY(Ln)
TL_ASCEND_UNARY(Abs)
TL_ASCEND_UNARY(Sqrt)
TL_ASCEND_UNARY(Rsqrt)
#define TL_ASCEND_REDUCE(name)                                                                        \
  template <typename T>                                                                              \
  void name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work, const int32_t count);
TL_ASCEND_REDUCE(ReduceMax)
TL_ASCEND_REDUCE(ReduceMin)
TL_ASCEND_REDUCE(ReduceSum)
template <typename T>
void Duplicate(const LocalTensor<T>& dst, const T& scalar, const int32_t& count);
template <typename D, typename S>
void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& mode, const uint32_t count);
// The repeat form: `mask` elements of each repeat, repeats `dstRepStride` / `srcRepStride` 32-byte blocks
// apart.
struct UnaryRepeatParams {
  UnaryRepeatParams(uint16_t dstBlkStride, uint16_t srcBlkStride, uint8_t dstRepStride, uint8_t srcRepStride);
};
template <typename D, typename S>
void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& mode, const uint64_t mask,
          const uint8_t repeatTimes, const UnaryRepeatParams& params);
// Compare: one bit of `dst` per element (set where the comparison holds); Select: src0 where the mask's bit
// is set, src1 elsewhere (SELMODE::VSEL_TENSOR_TENSOR_MODE: two tensors).
enum class CMPMODE { LT, GT, EQ, LE, GE, NE };
enum class SELMODE { VSEL_CMPMASK_SPR, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };
template <typename T, typename U>
void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
             CMPMODE cmpMode, uint32_t count);
template <typename T, typename U>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
            const LocalTensor<T>& src1, SELMODE selMode, uint32_t count);

}  // namespace AscendC

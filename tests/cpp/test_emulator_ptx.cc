// The PTX emulator (src/emulator/ptx/) on hand-written PTX. Expected values are worked out here from the PTX
// ISA's definitions (shfl's lane formula, the ldmatrix and mma.m16n8k16 fragment layouts, cvt rounding and
// saturation, setp on NaN, bfe / bfi / prmt / lop3, shift clamping, cp.async groups), independently of the
// emulator and of the compiler's layout code; several are spelled out as literal numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "emulator/ptx/ptx.h"
#include "support/error.h"

namespace tl::emu::ptx {
namespace {

// A module with one kernel `k(.param .u64 p0, .param .u64 p1, .param .u64 p2)` whose body is `body`, with
// the usual NVRTC register files.
std::string Kernel(const std::string& body, const std::string& shared = "") {
  return ".version 8.0\n.target sm_80\n.address_size 64\n" + shared +
         "\n.visible .entry k(\n  .param .u64 p0,\n  .param .u64 p1,\n  .param .u64 p2\n)\n{\n"
         "  .reg .pred %p<16>;\n  .reg .b16 %rs<16>;\n  .reg .b32 %r<64>;\n  .reg .f32 %f<32>;\n"
         "  .reg .b64 %rd<32>;\n  .reg .f64 %fd<8>;\n" +
         body + "\n}\n";
}

// Loads the three pointer parameters into %rd0..%rd2 and the lane / thread index into %r0, and %rd3 = 4 * tid.
const char* kPrologue =
    "  ld.param.u64 %rd0, [p0];\n  ld.param.u64 %rd1, [p1];\n  ld.param.u64 %rd2, [p2];\n"
    "  mov.u32 %r0, %tid.x;\n  mul.wide.u32 %rd3, %r0, 4;\n";

template <typename A, typename B = uint32_t, typename C = uint32_t>
Result Launch1(const std::string& ptx, int threads, std::vector<A>* a, std::vector<B>* b = nullptr,
               std::vector<C>* c = nullptr, int64_t dyn_smem = 0, Options opt = Options()) {
  Launch L;
  L.entry = "k";
  L.block = {threads, 1, 1};
  L.dynamic_smem = dyn_smem;
  L.params = {reinterpret_cast<uint64_t>(a->data()), b ? reinterpret_cast<uint64_t>(b->data()) : 0,
              c ? reinterpret_cast<uint64_t>(c->data()) : 0};
  L.regions.push_back({L.params[0], a->size() * sizeof(A), "a"});
  if (b) L.regions.push_back({L.params[1], b->size() * sizeof(B), "b"});
  if (c) L.regions.push_back({L.params[2], c->size() * sizeof(C), "c"});
  return Run(*Parse(ptx), L, opt);
}

std::string Kinds(const Result& r) {
  std::string s;
  for (const auto& x : r.reports) s += x.kind + " ";
  return s;
}

// shfl.sync (PTX ISA 9.7.9.6): j = lane - b (up, valid j >= maxLane), lane + b / lane ^ b (down / bfly, valid
// j <= maxLane), minLane | (b & ~segmask) (idx), maxLane = (lane & segmask) | (c & ~segmask).
TEST(PtxEmu, ShflModesAndSegments) {
  std::string body = std::string(kPrologue) +
                     "  mul.lo.u32 %r1, %r0, 10;\n"
                     "  shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;\n"
                     "  shfl.sync.up.b32 %r3|%p1, %r1, 2, 0, -1;\n"
                     "  shfl.sync.down.b32 %r4|%p2, %r1, 3, 31, -1;\n"
                     "  shfl.sync.idx.b32 %r5, %r1, 5, 31, -1;\n"
                     "  shfl.sync.idx.b32 %r6, %r1, 2, 6175, -1;\n"  // c = 0x181f: segments of 8 lanes
                     "  selp.u32 %r7, 1, 0, %p1;\n  selp.u32 %r8, 1, 0, %p2;\n"
                     "  mul.wide.u32 %rd4, %r0, 28;\n  add.s64 %rd5, %rd0, %rd4;\n"
                     "  st.global.u32 [%rd5], %r2;\n  st.global.u32 [%rd5+4], %r3;\n  st.global.u32 [%rd5+8], %r4;\n"
                     "  st.global.u32 [%rd5+12], %r5;\n  st.global.u32 [%rd5+16], %r6;\n"
                     "  st.global.u32 [%rd5+20], %r7;\n  st.global.u32 [%rd5+24], %r8;\n  ret;";
  std::vector<uint32_t> out(32 * 7, 0xDEAD);
  Result r = Launch1(Kernel(body), 32, &out);
  EXPECT_EQ(r.total_reports, 0) << Kinds(r);
  for (uint32_t l = 0; l < 32; ++l) {
    const uint32_t* o = &out[l * 7];
    EXPECT_EQ(o[0], (l ^ 1) * 10) << l;
    EXPECT_EQ(o[1], l >= 2 ? (l - 2) * 10 : l * 10) << l;
    EXPECT_EQ(o[2], l + 3 <= 31 ? (l + 3) * 10 : l * 10) << l;
    EXPECT_EQ(o[3], 50u);
    EXPECT_EQ(o[4], ((l & ~7u) + 2) * 10) << l;
    EXPECT_EQ(o[5], l >= 2 ? 1u : 0u);
    EXPECT_EQ(o[6], l <= 28 ? 1u : 0u);
  }
  EXPECT_EQ(out[5 * 7 + 4], 20u);  // lane 5 of segment 0..7 reads lane 2
  EXPECT_EQ(out[13 * 7 + 4], 100u);  // lane 13 reads lane 10
}

// ldmatrix.m8n8.x1{.trans}.shared.b16: lanes 0..7 give the rows of an 8x8 matrix M[r][c] = 8r + c; lane l
// holds (M[l/4][2(l%4)], M[l/4][2(l%4)+1]) in the low / high half, transposed: (M[2(l%4)][l/4],
// M[2(l%4)+1][l/4]).
TEST(PtxEmu, LdmatrixX1AndTrans) {
  std::string body = std::string(kPrologue) +
                     "  mov.u32 %r9, sm;\n"
                     "  shl.b32 %r1, %r0, 1;\n  add.s32 %r2, %r9, %r1;\n"  // each lane stores 2 elements: 64
                     "  cvt.u16.u32 %rs1, %r1;\n  add.s16 %rs2, %rs1, 1;\n"
                     "  mov.b32 %r3, {%rs1, %rs2};\n  shl.b32 %r4, %r0, 2;\n  add.s32 %r5, %r9, %r4;\n"
                     "  st.shared.u32 [%r5], %r3;\n  bar.sync 0;\n"
                     "  and.b32 %r6, %r0, 7;\n  shl.b32 %r6, %r6, 4;\n  add.s32 %r6, %r9, %r6;\n"
                     "  ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r7}, [%r6];\n"
                     "  ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%r8}, [%r6];\n"
                     "  mul.wide.u32 %rd4, %r0, 8;\n  add.s64 %rd5, %rd0, %rd4;\n"
                     "  st.global.u32 [%rd5], %r7;\n  st.global.u32 [%rd5+4], %r8;\n  ret;";
  std::vector<uint32_t> out(64, 0);
  Result r = Launch1(Kernel(body, ".shared .align 16 .b8 sm[128];"), 32, &out);
  EXPECT_EQ(r.total_reports, 0) << Kinds(r);
  auto M = [](uint32_t row, uint32_t col) { return row * 8 + col; };
  for (uint32_t l = 0; l < 32; ++l) {
    EXPECT_EQ(out[2 * l], M(l / 4, 2 * (l % 4)) | M(l / 4, 2 * (l % 4) + 1) << 16) << l;
    EXPECT_EQ(out[2 * l + 1], M(2 * (l % 4), l / 4) | M(2 * (l % 4) + 1, l / 4) << 16) << l;
  }
  EXPECT_EQ(out[2 * 5], 0x000B000Au);      // lane 5: row 1, columns 2 and 3 (10, 11)
  EXPECT_EQ(out[2 * 5 + 1], 0x00190011u);  // transposed: rows 2 and 3 of column 1 (17, 25)
}

uint16_t Half(float x) {  // exact small integers and halves only (the test's values)
  if (x == 0) return 0;
  int e;
  float m = std::frexp(std::fabs(x), &e);  // x = m 2^e, m in [0.5, 1)
  uint16_t mant = static_cast<uint16_t>(std::lround((m * 2 - 1) * 1024));
  return static_cast<uint16_t>((x < 0 ? 0x8000 : 0) | ((e - 1 + 15) << 10) | mant);
}

// One warp runs `mma` (after `setup`): each lane's 8 words of `in` (lane l: in[8 l .. 8 l + 7]) in %r1..%r8, C
// = 0.5 in %f1..%f4, D (%f5..%f8) stored to `out` (lane l: out[4 l .. 4 l + 3]).
Result RunMma(const std::string& setup, const std::string& mma, std::vector<uint32_t>* in, std::vector<float>* out) {
  std::string body = std::string(kPrologue) +
                     "  mul.wide.u32 %rd4, %r0, 32;\n  add.s64 %rd5, %rd0, %rd4;\n"
                     "  ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd5];\n"
                     "  ld.global.v4.u32 {%r5, %r6, %r7, %r8}, [%rd5+16];\n"
                     "  mov.f32 %f1, 0f3F000000;\n  mov.f32 %f2, 0f3F000000;\n  mov.f32 %f3, 0f3F000000;\n"
                     "  mov.f32 %f4, 0f3F000000;\n" +
                     setup + "  " + mma + "\n  mul.wide.u32 %rd6, %r0, 16;\n  add.s64 %rd7, %rd1, %rd6;\n"
                     "  st.global.v4.f32 [%rd7], {%f5, %f6, %f7, %f8};\n  ret;";
  out->assign(128, -1);
  return Launch1(Kernel(body), 32, in, out);
}

// mma.sync.m16n8k16.row.col.f32.f16.f16.f32 with A = I (16 x 16), B[k][n] = 8k + n, C = 0.5: D = B + 0.5.
// Each lane's registers are filled on the host from the ISA's fragment layout (g = lane / 4, t = lane % 4):
// A a_i at (g + 8 (i/2 % 2), 2t + i%2 + 8 (i/4)), B b_i at (2t + i%2 + 8 (i/2), g), C/D c_i at (g + 8 (i/2),
// 2t + i%2).
TEST(PtxEmu, MmaM16N8K16HandWorked) {
  std::vector<uint32_t> in(32 * 8);
  for (int l = 0; l < 32; ++l) {
    const int g = l / 4, t = l % 4;
    uint16_t a[8], b[4];
    for (int i = 0; i < 8; ++i) {
      const int row = g + 8 * (i / 2 % 2), col = 2 * t + i % 2 + 8 * (i / 4);
      a[i] = Half(row == col ? 1.0f : 0.0f);
    }
    for (int i = 0; i < 4; ++i) b[i] = Half(static_cast<float>(8 * (2 * t + i % 2 + 8 * (i / 2)) + g));
    for (int q = 0; q < 4; ++q) in[static_cast<size_t>(l * 8 + q)] = a[2 * q] | static_cast<uint32_t>(a[2 * q + 1]) << 16;
    for (int q = 0; q < 2; ++q) in[static_cast<size_t>(l * 8 + 4 + q)] = b[2 * q] | static_cast<uint32_t>(b[2 * q + 1]) << 16;
  }
  std::vector<float> out;
  Result r = RunMma("",
                    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f5, %f6, %f7, %f8}, {%r1, %r2, %r3, %r4}, "
                    "{%r5, %r6}, {%f1, %f2, %f3, %f4};",
                    &in, &out);
  EXPECT_EQ(r.total_reports, 0) << Kinds(r);
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < 4; ++i) {
      const int row = l / 4 + 8 * (i / 2), col = 2 * (l % 4) + i % 2;
      EXPECT_EQ(out[static_cast<size_t>(4 * l + i)], 8.0f * row + col + 0.5f) << l << " " << i;
    }
  EXPECT_EQ(out[4 * 5 + 0], 10.5f);  // lane 5: D[1][2]
  EXPECT_EQ(out[4 * 5 + 3], 75.5f);  // D[9][3]
}

// Expects D (RunMma's `out`, four floats a lane: c_i of lane l is row l / 4 + 8 (i / 2), column 2 (l % 4) + i
// % 2 of the m16n8 tile, PTX ISA "Matrix Fragments for mma.m16n8k*") to hold want(m, n), rounded to float,
// everywhere.
template <class F>
void ExpectD(const std::vector<float>& out, F want) {
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < 4; ++i) {
      const int m = l / 4 + 8 * (i / 2), n = 2 * (l % 4) + i % 2;
      EXPECT_EQ(out[static_cast<size_t>(4 * l + i)], static_cast<float>(want(m, n))) << l << " " << i;
    }
}

// RunMma's inputs (8 words a lane, the scale words 0) holding the m16n8k32 8-bit fragments of bytes a_byte(m,
// k) and b_byte(k, n), written from the PTX ISA: four a register, the first in bits 0-7; A reg r byte e at (g
// + 8 (r % 2), 4 t + e + 16 (r / 2)), B reg r byte e at (4 t + e + 16 r, g), lane l, g = l / 4, t = l % 4.
template <class FA, class FB>
std::vector<uint32_t> ByteK32Fragments(FA a_byte, FB b_byte) {
  std::vector<uint32_t> in(32 * 8, 0);
  for (int l = 0; l < 32; ++l) {
    const int g = l / 4, t = l % 4;
    for (int r = 0; r < 4; ++r)
      for (int e = 0; e < 4; ++e)
        in[static_cast<size_t>(l * 8 + r)] |= a_byte(g + 8 * (r % 2), 4 * t + e + 16 * (r / 2)) << (8 * e);
    for (int r = 0; r < 2; ++r)
      for (int e = 0; e < 4; ++e)
        in[static_cast<size_t>(l * 8 + 4 + r)] |= b_byte(4 * t + e + 16 * r, g) << (8 * e);
  }
  return in;
}

// RunMma's inputs (8 words a lane, the scale words 0) holding the m16n8k64 .e2m1 fragments of codes a_code(m,
// k) and b_code(k, n), written from the PTX ISA: eight values a register, the first in bits 0-3; A reg r
// nibble e at (g + 8 (r % 2), 8 t + e + 32 (r / 2)), B reg r nibble e at (8 t + e + 32 r, g), lane l, g = l /
// 4, t = l % 4.
template <class FA, class FB>
std::vector<uint32_t> E2m1K64Fragments(FA a_code, FB b_code) {
  std::vector<uint32_t> in(32 * 8, 0);
  for (int l = 0; l < 32; ++l) {
    const int g = l / 4, t = l % 4;
    for (int r = 0; r < 4; ++r)
      for (int e = 0; e < 8; ++e)
        in[static_cast<size_t>(l * 8 + r)] |=
            static_cast<uint32_t>(a_code(g + 8 * (r % 2), 8 * t + e + 32 * (r / 2))) << (4 * e);
    for (int r = 0; r < 2; ++r)
      for (int e = 0; e < 8; ++e)
        in[static_cast<size_t>(l * 8 + 4 + r)] |= static_cast<uint32_t>(b_code(8 * t + e + 32 * r, g))
                                                  << (4 * e);
  }
  return in;
}

// mma.sync.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3 (PTX
// ISA 9.7.14.3, "Block Scaling for mma.sync", and the m16n8k64 .e2m1 fragments: eight values a register, the
// first in bits 0-3; A reg r nibble e at (g + 8 (r % 2), 8 t + e + 32 (r / 2)), B reg r nibble e at (8 t + e
// + 32 r, g)). A[m][k] = 1 (code 2) where k % 16 == m, else 0, so D[m][n] = C + sum_j sa[m][j] sb[n][j] B[m +
// 16 j][n], with B[k][n] the e2m1 value of code (3 k + n) % 8 (0, 0.5, 1, 1.5, 2, 3, 4, 6). Scales (UE4M3
// bytes, byte j of a word scales k in [16 j, 16 j + 16)): sa[m][j] = 2^(j + m % 3), sb[n][j] = 2^-(n % 2) but
// sb[5][1] = 1.5. With {byte-id 0, thread-id-a 1} row m's word comes from lane 4 (m % 8) + 2 + m / 8 and with
// thread-id-b 2 column n's from lane 4 n + 2; every other lane holds 0x7F7F7F7F (UE4M3 NaN), so reading a
// wrong lane shows.
TEST(PtxEmu, MmaBlockScaledNvf4HandWorked) {
  auto e2m1 = [](int code) {
    static const double v[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    return code < 8 ? v[code] : -v[code - 8];
  };
  auto a_code = [](int m, int k) { return k % 16 == m ? 2 : 0; };
  auto b_code = [](int k, int n) { return (3 * k + n) % 8; };
  auto sa_byte = [](int m, int j) { return static_cast<uint32_t>((7 + j + m % 3) << 3); };
  auto sb_byte = [](int n, int j) {
    return n == 5 && j == 1 ? 0x3Cu : static_cast<uint32_t>((7 - n % 2) << 3);
  };
  std::vector<uint32_t> in = E2m1K64Fragments(a_code, b_code);
  for (int l = 0; l < 32; ++l) {
    const int g = l / 4, t = l % 4;
    const bool a_owner = t / 2 == 1;  // lanes 4 g + 2 (row g) and 4 g + 3 (row g + 8)
    const int m = g + 8 * (t % 2);
    uint32_t sa = 0x7F7F7F7Fu, sb = 0x7F7F7F7Fu;
    if (a_owner) {
      sa = 0;
      for (int j = 0; j < 4; ++j) sa |= sa_byte(m, j) << (8 * j);
    }
    if (t == 2) {
      sb = 0;
      for (int j = 0; j < 4; ++j) sb |= sb_byte(g, j) << (8 * j);
    }
    in[static_cast<size_t>(l * 8 + 6)] = sa;
    in[static_cast<size_t>(l * 8 + 7)] = sb;
  }
  std::vector<float> out;
  Result r = RunMma("  mov.u16 %rs1, 0;\n  mov.u16 %rs2, 1;\n  mov.u16 %rs3, 2;\n",
                    "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32"
                    ".ue4m3 {%f5, %f6, %f7, %f8}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f1, %f2, %f3, %f4}, {%r7}, "
                    "{%rs1, %rs2}, {%r8}, {%rs1, %rs3};",
                    &in, &out);
  EXPECT_EQ(r.total_reports, 0) << Kinds(r);
  auto ue4m3 = [](uint32_t b) {
    return std::ldexp(1.0 + (b & 7) / 8.0, static_cast<int>((b >> 3) & 15) - 7);
  };
  ExpectD(out, [&](int m, int n) {
    double want = 0.5;
    for (int j = 0; j < 4; ++j)
      want += ue4m3(sa_byte(m, j)) * ue4m3(sb_byte(n, j)) * e2m1(b_code(m + 16 * j, n));
    return want;
  });
  // lane 22 (g 5, t 2), d2: D[13][4] = 0.5 + 2^1 * 1 * B[13][4] + 2^2 * 1 * B[29][4] + 2^3 * B[45][4] + 2^4 *
  // B[61][4]
  //   codes (39 + 4) % 8 = 3, (87 + 4) % 8 = 3, (135 + 4) % 8 = 3, (183 + 4) % 8 = 3: 1.5 (2 + 4 + 8 + 16) +
  //   0.5 = 45.5
  EXPECT_EQ(out[4 * 22 + 2], 45.5f);
}

// mma.sync.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e4m3.f32.ue8m0: the 8-bit
// fragments of mma.m16n8k32 (four values a register, the first in bits 0-7; A reg r byte e at (g + 8 (r % 2),
// 4 t + e + 16 (r / 2)), B reg r byte e at (4 t + e + 16 r, g)), one E8M0 scale a row of A and a column of B:
// with .scale_vec::1X the byte byte-id of the word. A = I (e4m3 1.0 = 0x38 on the diagonal of its first 16
// columns), B[k][n] = (k + n) % 4 + 1 (e4m3 0x38, 0x40, 0x44, 0x48), sa[m] = 2^(m % 4), sb[n] = 2^-(n % 3), C
// = 0.5: D[m][n] = 0.5 + 2^(m % 4 - n % 3) ((m + n) % 4 + 1). Selectors {byte-id 2, thread-id-a 1} and
// {byte-id 2, thread-id-b 3}: the scales sit in byte 2 of the lanes named; every other byte and lane holds
// 0xFF (E8M0 NaN).
TEST(PtxEmu, MmaBlockScaledMxf8HandWorked) {
  const uint32_t e4m3[5] = {0, 0x38, 0x40, 0x44, 0x48};  // 0, 1, 2, 3, 4
  std::vector<uint32_t> in = ByteK32Fragments([&](int m, int k) { return k == m ? e4m3[1] : 0u; },
                                              [&](int k, int n) { return e4m3[(k + n) % 4 + 1]; });
  for (int l = 0; l < 32; ++l) {
    const int g = l / 4, t = l % 4;
    uint32_t sa = 0xFFFFFFFFu, sb = 0xFFFFFFFFu;
    if (t / 2 == 1) sa = (sa & ~0x00FF0000u) | static_cast<uint32_t>(127 + (g + 8 * (t % 2)) % 4) << 16;
    if (t == 3) sb = (sb & ~0x00FF0000u) | static_cast<uint32_t>(127 - g % 3) << 16;
    in[static_cast<size_t>(l * 8 + 6)] = sa;
    in[static_cast<size_t>(l * 8 + 7)] = sb;
  }
  std::vector<float> out;
  Result r = RunMma("  mov.u16 %rs1, 2;\n  mov.u16 %rs2, 1;\n  mov.u16 %rs3, 3;\n",
                    "mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e4m3.f32"
                    ".ue8m0 {%f5, %f6, %f7, %f8}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f1, %f2, %f3, %f4}, {%r7}, "
                    "{%rs1, %rs2}, {%r8}, {%rs1, %rs3};",
                    &in, &out);
  EXPECT_EQ(r.total_reports, 0) << Kinds(r);
  ExpectD(out,
          [](int m, int n) { return 0.5f + std::ldexp(static_cast<float>((m + n) % 4 + 1), m % 4 - n % 3); });
  // lane 13 (g 3, t 1), d3: D[11][3] = 0.5 + 2^(3 - 0) ((11 + 3) % 4 + 1) = 0.5 + 8 * 3 = 24.5
  EXPECT_EQ(out[4 * 13 + 3], 24.5f);
}

// mma.sync.m16n8k64.row.col.kind::mxf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0 (PTX ISA 9.7.14.3:
// with .scale_vec::2X a byte pair of the scale word scales a row, byte-id 0 the lower pair and 2 the upper;
// the m16n8k64 .e2m1 fragments as above). A[m][k] = 1 (code 2) where k % 32 == m, else 0, so D[m][n] = C +
// sum_j sa[m][j] sb[n][j] B[m + 32 j][n], B[k][n] the e2m1 value of code (3 k + n) % 8. E8M0 scales:
// sa[m][j] = 2^(j + m % 3), sb[n][j] = 2^-(n % 2) but sb[5][1] = 2^3. Selectors {byte-id 2, thread-id-a 0}
// and {byte-id 2, thread-id-b 1}: the scales are bytes 2 (k < 32) and 3 (k >= 32) of the words of lanes 4 g
// (row g), 4 g + 1 (row g + 8) and 4 n + 1 (column n); bytes 0 and 1, and every other lane, hold 0xFF (E8M0
// NaN), so a wrong byte pair or lane shows.
TEST(PtxEmu, MmaBlockScaledMxf4TakesTwoScalesAStep) {
  auto e2m1 = [](int code) {
    static const double v[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    return v[code];
  };
  auto a_code = [](int m, int k) { return k % 32 == m ? 2 : 0; };
  auto b_code = [](int k, int n) { return (3 * k + n) % 8; };
  auto sa_exp = [](int m, int j) { return j + m % 3; };
  auto sb_exp = [](int n, int j) { return n == 5 && j == 1 ? 3 : -(n % 2); };
  std::vector<uint32_t> in = E2m1K64Fragments(a_code, b_code);
  for (int l = 0; l < 32; ++l) {
    const int g = l / 4, t = l % 4;
    uint32_t sa = 0xFFFFFFFFu, sb = 0xFFFFFFFFu;
    if (t < 2) {  // thread-id-a 0: lanes 4 g (row g) and 4 g + 1 (row g + 8)
      const int m = g + 8 * t;
      sa = 0x0000FFFFu | static_cast<uint32_t>(127 + sa_exp(m, 0)) << 16 |
           static_cast<uint32_t>(127 + sa_exp(m, 1)) << 24;
    }
    if (t == 1)
      sb = 0x0000FFFFu | static_cast<uint32_t>(127 + sb_exp(g, 0)) << 16 |
           static_cast<uint32_t>(127 + sb_exp(g, 1)) << 24;
    in[static_cast<size_t>(l * 8 + 6)] = sa;
    in[static_cast<size_t>(l * 8 + 7)] = sb;
  }
  std::vector<float> out;
  Result r =
      RunMma("  mov.u16 %rs1, 2;\n  mov.u16 %rs2, 0;\n  mov.u16 %rs3, 1;\n",
             "mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32"
             ".ue8m0 {%f5, %f6, %f7, %f8}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f1, %f2, %f3, %f4}, {%r7}, "
             "{%rs1, %rs2}, {%r8}, {%rs1, %rs3};",
             &in, &out);
  EXPECT_EQ(r.total_reports, 0) << Kinds(r);
  ExpectD(out, [&](int m, int n) {
    double want = 0.5;
    for (int j = 0; j < 2; ++j) want += std::ldexp(e2m1(b_code(m + 32 * j, n)), sa_exp(m, j) + sb_exp(n, j));
    return want;
  });
  // lane 22 (g 5, t 2), d3: D[13][5] = 0.5 + 2^(0 + 1 - 1) B[13][5] + 2^(1 + 1 + 3) B[45][5]; codes
  // (39 + 5) % 8 = 4 (2.0) and (135 + 5) % 8 = 4 (2.0): 0.5 + 2 + 64 = 66.5
  EXPECT_EQ(out[4 * 22 + 3], 66.5f);
}

// mma.sync.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e2m1.e3m2.f32.ue8m0: the 8-bit
// fragments of mma.m16n8k32 (as above) hold sub-byte values one a byte, an fp4 value in bits 2-5 and an fp6
// value in bits 0-5 of its byte (CUTLASS's SM120 MMA traits shift e2m1 up by two from ldmatrix's low nibble
// and leave fp6 alone; the PTX ISA draws these containers only in figures). A = I on its first 16 columns
// (e2m1 1.0, code 2, byte 0x08), B[k][n] e3m2 1 + ((k + n) % 4) / 4 (codes 0x0C to 0x0F: exponent 3 = bias,
// two mantissa bits), sa[m] = 2^(m % 4), sb[n] = 2^-(n % 3) in byte 1 ({byte-id 1, thread-id 0}): D[m][n] =
// 0.5 + 2^(m % 4 - n % 3) (1 + ((m + n) % 4) / 4). Then an A byte left in the low nibble (0x02) and a B byte
// with bit 6 set are reported.
TEST(PtxEmu, MmaBlockScaledSubByteContainersOfMxf8f6f4) {
  std::vector<uint32_t> in =
      ByteK32Fragments([](int m, int k) { return k == m ? 0x08u : 0u; },
                       [](int k, int n) { return 0x0Cu + static_cast<uint32_t>((k + n) % 4); });
  for (int l = 0; l < 32; ++l) {
    const int g = l / 4, t = l % 4;
    uint32_t sa = 0xFFFFFFFFu, sb = 0xFFFFFFFFu;
    if (t < 2) sa = (sa & ~0x0000FF00u) | static_cast<uint32_t>(127 + (g + 8 * t) % 4) << 8;
    if (t == 0) sb = (sb & ~0x0000FF00u) | static_cast<uint32_t>(127 - g % 3) << 8;
    in[static_cast<size_t>(l * 8 + 6)] = sa;
    in[static_cast<size_t>(l * 8 + 7)] = sb;
  }
  const std::string mma =
      "mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e2m1.e3m2.f32.ue8m0 "
      "{%f5, %f6, %f7, %f8}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f1, %f2, %f3, %f4}, {%r7}, {%rs1, %rs2}, "
      "{%r8}, {%rs1, %rs2};";
  const std::string ids = "  mov.u16 %rs1, 1;\n  mov.u16 %rs2, 0;\n";
  std::vector<float> out;
  Result r = RunMma(ids, mma, &in, &out);
  EXPECT_EQ(r.total_reports, 0) << Kinds(r);
  ExpectD(out, [](int m, int n) {
    return 0.5f + std::ldexp(1.0f + static_cast<float>((m + n) % 4) / 4, m % 4 - n % 3);
  });
  // lane 9 (g 2, t 1), d1: D[2][3] = 0.5 + 2^(2 - 0) (1 + 1 / 4) = 5.5
  EXPECT_EQ(out[4 * 9 + 1], 5.5f);
  // lane 0's A register 0 byte 0 holds A[0][0]: as ldmatrix leaves it (0x02) it is not a container
  std::vector<uint32_t> low = in;
  low[0] = (low[0] & ~0xFFu) | 0x02u;
  Result r2 = RunMma(ids, mma, &low, &out);
  EXPECT_NE(Kinds(r2).find("mma_container"), std::string::npos) << Kinds(r2);
  std::vector<uint32_t> high = in;
  high[4] |= 0x40u;  // bit 6 of an e3m2 byte of lane 0's B
  Result r3 = RunMma(ids, mma, &high, &out);
  EXPECT_NE(Kinds(r3).find("mma_container"), std::string::npos) << Kinds(r3);
}

// cvt (PTX ISA 9.7.9.21): f32 -> f16 rounds to nearest even and overflows to infinity; float -> integer
// rounds as asked and saturates, NaN giving 0; integer narrowing wraps, .sat clamps.
TEST(PtxEmu, CvtRoundingAndSaturation) {
  std::vector<float> in = {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 65520.0f, 3.9e9f, NAN, -2.5f, -2.5f, 0.0f};
  std::string body = std::string(kPrologue) +
                     "  ld.global.f32 %f1, [%rd0];\n  ld.global.f32 %f2, [%rd0+4];\n  ld.global.f32 %f3, [%rd0+8];\n"
                     "  ld.global.f32 %f4, [%rd0+12];\n  ld.global.f32 %f5, [%rd0+16];\n  ld.global.f32 %f6, [%rd0+20];\n"
                     "  cvt.rn.f16.f32 %rs1, %f1;\n  cvt.u32.u16 %r1, %rs1;\n  st.global.u32 [%rd1], %r1;\n"
                     "  cvt.rn.f16.f32 %rs2, %f2;\n  cvt.u32.u16 %r2, %rs2;\n  st.global.u32 [%rd1+4], %r2;\n"
                     "  cvt.rn.f16.f32 %rs3, %f3;\n  cvt.u32.u16 %r3, %rs3;\n  st.global.u32 [%rd1+8], %r3;\n"
                     "  cvt.rzi.s32.f32 %r4, %f4;\n  st.global.u32 [%rd1+12], %r4;\n"
                     "  cvt.rzi.s32.f32 %r5, %f5;\n  st.global.u32 [%rd1+16], %r5;\n"
                     "  cvt.rni.s32.f32 %r6, %f6;\n  st.global.u32 [%rd1+20], %r6;\n"
                     "  cvt.rmi.s32.f32 %r7, %f6;\n  st.global.u32 [%rd1+24], %r7;\n"
                     "  mov.u32 %r8, 300;\n  cvt.u8.u32 %rs4, %r8;\n  cvt.u32.u16 %r9, %rs4;\n  st.global.u32 [%rd1+28], %r9;\n"
                     "  cvt.sat.u8.s32 %rs5, %r8;\n  cvt.u32.u16 %r10, %rs5;\n  st.global.u32 [%rd1+32], %r10;\n"
                     "  mov.u32 %r11, -5;\n  cvt.s64.s32 %rd8, %r11;\n  st.global.u64 [%rd1+40], %rd8;\n  ret;";
  std::vector<int32_t> out(12, 7);
  Result r = Launch1(Kernel(body), 1, &in, &out);
  EXPECT_EQ(r.total_reports, 0) << Kinds(r);
  EXPECT_EQ(out[0], 0x3C00);      // a tie: to even (down)
  EXPECT_EQ(out[1], 0x3C02);      // a tie: to even (up)
  EXPECT_EQ(out[2], 0x7C00);      // past 65504 + half an ulp: infinity
  EXPECT_EQ(out[3], INT32_MAX);   // saturated
  EXPECT_EQ(out[4], 0);           // NaN
  EXPECT_EQ(out[5], -2);          // -2.5 to nearest even
  EXPECT_EQ(out[6], -3);          // toward -inf
  EXPECT_EQ(out[7], 44);          // 300 mod 256
  EXPECT_EQ(out[8], 255);         // .sat
  int64_t wide;
  std::memcpy(&wide, &out[10], 8);
  EXPECT_EQ(wide, -5);
}

// setp (PTX ISA 9.7.3.x, 9.7.8.x): ordered comparisons are false with a NaN operand, the u-forms true;
// integer comparisons follow the type's signedness; .and combines with a third predicate (q gets !cmp).
TEST(PtxEmu, SetpNanSignednessAndCombination) {
  std::string body = std::string(kPrologue) +
                     "  mov.f32 %f1, 0f7FC00000;\n  mov.f32 %f2, 0f3F800000;\n"
                     "  setp.lt.f32 %p1, %f1, %f2;\n  setp.ltu.f32 %p2, %f1, %f2;\n  setp.ne.f32 %p3, %f1, %f1;\n"
                     "  setp.neu.f32 %p4, %f1, %f1;\n  mov.u32 %r1, -1;\n  mov.u32 %r2, 1;\n"
                     "  setp.lt.u32 %p5, %r1, %r2;\n  setp.lt.s32 %p6, %r1, %r2;\n"
                     "  setp.gt.and.s32 %p7|%p8, %r2, %r1, %p6;\n"
                     "  selp.u32 %r3, 1, 0, %p1;\n  st.global.u32 [%rd0], %r3;\n  selp.u32 %r3, 1, 0, %p2;\n"
                     "  st.global.u32 [%rd0+4], %r3;\n  selp.u32 %r3, 1, 0, %p3;\n  st.global.u32 [%rd0+8], %r3;\n"
                     "  selp.u32 %r3, 1, 0, %p4;\n  st.global.u32 [%rd0+12], %r3;\n  selp.u32 %r3, 1, 0, %p5;\n"
                     "  st.global.u32 [%rd0+16], %r3;\n  selp.u32 %r3, 1, 0, %p6;\n  st.global.u32 [%rd0+20], %r3;\n"
                     "  selp.u32 %r3, 1, 0, %p7;\n  st.global.u32 [%rd0+24], %r3;\n  selp.u32 %r3, 1, 0, %p8;\n"
                     "  st.global.u32 [%rd0+28], %r3;\n  ret;";
  std::vector<uint32_t> out(8, 9);
  Result r = Launch1(Kernel(body), 1, &out);
  EXPECT_EQ(r.total_reports, 0) << Kinds(r);
  EXPECT_EQ(out, (std::vector<uint32_t>{0, 1, 0, 1, 0, 1, 1, 0}));
}

// Funnel shifts (PTX ISA, "shf"): {b, a} as 64 bits with b on top; shf.l keeps the upper 32 bits of the funnel
// shifted left, shf.r the lower 32 of it shifted right; .wrap takes the count mod 32, .clamp caps it at 32. With a
// = b it is a rotate (what NVRTC emits for `x << 31 | x >> 1`).
TEST(PtxEmu, FunnelShifts) {
  std::string body = std::string(kPrologue) +
                     "  mov.u32 %r1, 0x12345678;\n  mov.u32 %r2, 0x9ABCDEF0;\n  mov.u32 %r3, 8;\n"
                     "  shf.l.wrap.b32 %r4, %r1, %r2, %r3;\n  st.global.u32 [%rd0], %r4;\n"    // 0xBCDEF012
                     "  shf.r.wrap.b32 %r5, %r1, %r2, %r3;\n  st.global.u32 [%rd0+4], %r5;\n"  // 0xF0123456
                     "  mov.u32 %r6, 40;\n"
                     "  shf.l.wrap.b32 %r7, %r1, %r2, %r6;\n  st.global.u32 [%rd0+8], %r7;\n"    // 40 mod 32 = 8
                     "  shf.l.clamp.b32 %r8, %r1, %r2, %r6;\n  st.global.u32 [%rd0+12], %r8;\n"  // 32: a
                     "  shf.r.clamp.b32 %r9, %r1, %r2, %r6;\n  st.global.u32 [%rd0+16], %r9;\n"  // 32: b
                     "  shf.l.wrap.b32 %r10, %r1, %r1, 31;\n  st.global.u32 [%rd0+20], %r10;\n  ret;";  // rotate
  std::vector<uint32_t> out(6, 0);
  Result r = Launch1(Kernel(body), 1, &out);
  EXPECT_EQ(r.total_reports, 0) << Kinds(r);
  EXPECT_EQ(out[0], 0xBCDEF012u);
  EXPECT_EQ(out[1], 0xF0123456u);
  EXPECT_EQ(out[2], 0xBCDEF012u);
  EXPECT_EQ(out[3], 0x12345678u);
  EXPECT_EQ(out[4], 0x9ABCDEF0u);
  EXPECT_EQ(out[5], 0x091A2B3Cu);  // 0x12345678 rotated left by 31 = right by 1
}

// Bit-field and logic instructions (PTX ISA 9.7.8): bfe extracts (sign-extending for .s32 from the field's top
// bit), bfi inserts, prmt picks bytes of {b, a} by selector nibbles (bit 3: replicate the byte's sign), lop3
// evaluates its truth table; shifts by the width or more give 0 (shl, shr.u) or the sign (shr.s).
TEST(PtxEmu, BitFieldsPermutesAndShiftClamps) {
  std::string body = std::string(kPrologue) +
                     "  mov.u32 %r1, -1412623820;\n"  // 0xABCD1234
                     "  bfe.u32 %r2, %r1, 8, 8;\n  st.global.u32 [%rd0], %r2;\n"
                     "  mov.u32 %r3, 32768;\n  bfe.s32 %r4, %r3, 12, 4;\n  st.global.u32 [%rd0+4], %r4;\n"
                     "  mov.u32 %r5, 15;\n  mov.u32 %r6, 0;\n  bfi.b32 %r7, %r5, %r6, 4, 4;\n  st.global.u32 [%rd0+8], %r7;\n"
                     "  mov.u32 %r8, 0xB3221100;\n  mov.u32 %r9, 0x77665544;\n"
                     "  prmt.b32 %r10, %r8, %r9, 29732;\n  st.global.u32 [%rd0+12], %r10;\n"  // 0x7424
                     "  prmt.b32 %r11, %r8, %r9, 0x0BB3;\n  st.global.u32 [%rd0+16], %r11;\n"
                     "  mov.u32 %r12, 12;\n  mov.u32 %r13, 10;\n  mov.u32 %r14, 6;\n"
                     "  lop3.b32 %r15, %r12, %r13, %r14, 150;\n  st.global.u32 [%rd0+20], %r15;\n"  // 0x96: a^b^c
                     "  shl.b32 %r16, %r5, 40;\n  st.global.u32 [%rd0+24], %r16;\n"
                     "  mov.u32 %r17, -8;\n  shr.s32 %r18, %r17, 40;\n  st.global.u32 [%rd0+28], %r18;\n"
                     "  shr.u32 %r19, %r17, 33;\n  st.global.u32 [%rd0+32], %r19;\n"
                     "  shr.s32 %r20, %r17, 1;\n  st.global.u32 [%rd0+36], %r20;\n"
                     "  popc.b32 %r21, %r1;\n  st.global.u32 [%rd0+40], %r21;\n"
                     "  clz.b32 %r22, %r13;\n  st.global.u32 [%rd0+44], %r22;\n"
                     "  mul.hi.u32 %r23, %r17, %r5;\n  st.global.u32 [%rd0+48], %r23;\n"
                     "  mul.hi.s32 %r24, %r17, %r5;\n  st.global.u32 [%rd0+52], %r24;\n  ret;";
  std::vector<uint32_t> out(14, 0);
  Result r = Launch1(Kernel(body), 1, &out);
  EXPECT_EQ(r.total_reports, 0) << Kinds(r);
  EXPECT_EQ(out[0], 0x12u);
  EXPECT_EQ(out[1], 0xFFFFFFF8u);  // field 1000b, sign bit set
  EXPECT_EQ(out[2], 0xF0u);
  EXPECT_EQ(out[3], 0x77442244u);  // selectors (low nibble first) 4, 2, 4, 7: b0, a2, b0, b3
  EXPECT_EQ(out[4], 0x00FFFFB3u);  // selectors 3, B, B, 0: a3, a3's sign (0xB3 < 0) twice, a0
  EXPECT_EQ(out[5], 12u ^ 10u ^ 6u);
  EXPECT_EQ(out[6], 0u);
  EXPECT_EQ(out[7], 0xFFFFFFFFu);
  EXPECT_EQ(out[8], 0u);
  EXPECT_EQ(out[9], 0xFFFFFFFCu);
  EXPECT_EQ(out[10], 15u);  // popcount of 0xABCD1234: 2 + 3 + 2 + 3 + 1 + 1 + 2 + 1
  EXPECT_EQ(out[11], 28u);
  EXPECT_EQ(out[12], 14u);          // (2^32 - 8) * 15 >> 32
  EXPECT_EQ(out[13], 0xFFFFFFFFu);  // -8 * 15 = -120: high word -1
}

// Lanes leave a loop after different trip counts (lane l runs l iterations) and meet again before a
// full-warp shfl.sync: a broken reconvergence would make it a partial-warp shuffle (reported).
TEST(PtxEmu, DivergentLoopReconverges) {
  std::string body = std::string(kPrologue) +
                     "  mov.u32 %r1, 0;\n  mov.u32 %r2, 0;\n"
                     "$L_loop:\n  setp.ge.u32 %p1, %r2, %r0;\n  @%p1 bra $L_done;\n"
                     "  add.s32 %r1, %r1, %r2;\n  add.s32 %r2, %r2, 1;\n  bra.uni $L_loop;\n"
                     "$L_done:\n  shfl.sync.bfly.b32 %r3, %r1, 1, 31, -1;\n"
                     "  add.s64 %rd4, %rd0, %rd3;\n  st.global.u32 [%rd4], %r3;\n  ret;";
  std::vector<uint32_t> out(32, 0);
  Result r = Launch1(Kernel(body), 32, &out);
  EXPECT_EQ(r.total_reports, 0) << Kinds(r);
  for (uint32_t l = 0; l < 32; ++l) {
    const uint32_t j = l ^ 1;
    EXPECT_EQ(out[l], j == 0 ? 0 : j * (j - 1) / 2) << l;  // lane j's sum 0 + 1 + ... + (j - 1)
  }
}

// cp.async (PTX ISA 9.7.9.25.3): bytes land at the wait that covers their group; src-size 8 of 16 zero-fills
// the rest; a read of the destination before the covering wait sees the old contents.
TEST(PtxEmu, CpAsyncGroupsAndZeroFill) {
  std::vector<uint32_t> src = {1, 2, 3, 4, 5, 6, 7, 8};
  std::string body = std::string(kPrologue) +
                     "  mov.u32 %r1, sm;\n  mov.u32 %r2, 99;\n"
                     "  st.shared.v4.u32 [%r1], {%r2, %r2, %r2, %r2};\n  st.shared.v4.u32 [%r1+16], {%r2, %r2, %r2, %r2};\n"
                     "  cp.async.cg.shared.global [%r1], [%rd0], 16, 8;\n  cp.async.commit_group;\n"
                     "  add.s64 %rd4, %rd0, 16;\n  add.s32 %r3, %r1, 16;\n"
                     "  cp.async.ca.shared.global [%r3], [%rd4], 16;\n  cp.async.commit_group;\n"
                     "  ld.shared.u32 %r4, [%r1];\n  st.global.u32 [%rd1], %r4;\n"  // before any wait: 99
                     "  cp.async.wait_group 1;\n"
                     "  ld.shared.v4.u32 {%r5, %r6, %r7, %r8}, [%r1];\n  st.global.v4.u32 [%rd1+16], {%r5, %r6, %r7, %r8};\n"
                     "  ld.shared.u32 %r9, [%r1+16];\n  st.global.u32 [%rd1+32], %r9;\n"  // group 2 not landed: 99
                     "  cp.async.wait_all;\n  ld.shared.u32 %r10, [%r1+16];\n  st.global.u32 [%rd1+36], %r10;\n  ret;";
  std::vector<uint32_t> out(10, 0);
  Result r = Launch1(Kernel(body, ".shared .align 16 .b8 sm[32];"), 1, &src, &out);
  EXPECT_EQ(r.total_reports, 0) << (r.reports.empty() ? "" : r.reports[0].message);
  EXPECT_EQ(out, (std::vector<uint32_t>{99, 0, 0, 0, 1, 2, 0, 0, 99, 5}));
}

TEST(PtxEmu, AtomicsAcrossThreads) {
  std::string body = std::string(kPrologue) +
                     "  atom.global.add.u32 %r1, [%rd0], 1;\n"
                     "  mov.f32 %f1, 0f3F000000;\n  red.global.add.f32 [%rd0+4], %f1;\n"
                     "  atom.global.max.s32 %r2, [%rd0+8], %r0;\n  ret;";
  std::vector<uint32_t> out(3, 0);
  Result r = Launch1(Kernel(body), 64, &out);
  EXPECT_EQ(r.total_reports, 0) << Kinds(r);
  float f;
  std::memcpy(&f, &out[1], 4);
  EXPECT_EQ(out[0], 64u);
  EXPECT_EQ(f, 32.0f);
  EXPECT_EQ(out[2], 63u);
}

// The checks: a shared write and another thread's read with no barrier between them is a race (with
// bar.sync between: none); a global access outside every buffer, a misaligned one, a read of never-written
// shared memory; a named barrier that never fills is a deadlock, a half-warp barrier a divergence.
TEST(PtxEmu, RacesAndTheirBarrier) {
  for (bool barrier : {false, true}) {
    std::string body = std::string(kPrologue) +
                       "  mov.u32 %r1, sm;\n  shl.b32 %r2, %r0, 2;\n  add.s32 %r3, %r1, %r2;\n"
                       "  st.shared.u32 [%r3], %r0;\n" + (barrier ? "  bar.sync 0;\n" : "") +
                       "  xor.b32 %r4, %r2, 4;\n  add.s32 %r5, %r1, %r4;\n  ld.shared.u32 %r6, [%r5];\n"
                       "  add.s64 %rd4, %rd0, %rd3;\n  st.global.u32 [%rd4], %r6;\n  ret;";
    std::vector<uint32_t> out(64, 0);
    Result r = Launch1(Kernel(body, ".shared .align 4 .b8 sm[256];"), 64, &out);
    if (barrier) {
      EXPECT_EQ(r.total_reports, 0) << Kinds(r);
      for (uint32_t l = 0; l < 64; ++l) EXPECT_EQ(out[l], l ^ 1u);
    } else {
      ASSERT_GT(r.total_reports, 0);
      EXPECT_EQ(r.reports[0].kind, "race");
      EXPECT_NE(r.reports[0].message.find("'sm' +"), std::string::npos) << r.reports[0].message;
      EXPECT_NE(r.reports[0].message.find("at PTX line"), std::string::npos);
    }
  }
}

// Lanes of a warp storing to one address in the same instruction collide inside that store (Triton's
// cross-warp reductions store a warp's result from every lane): not a race. The same in two instructions is.
TEST(PtxEmu, SameInstructionStoresCollideTwoInstructionsRace) {
  for (bool split : {false, true}) {
    std::string body = std::string(kPrologue) + "  mov.u32 %r1, sm;\n" +
                       (split ? "  setp.lt.u32 %p1, %r0, 16;\n  @%p1 st.shared.u32 [%r1], %r0;\n"
                                "  @!%p1 st.shared.u32 [%r1], %r0;\n"
                              : "  st.shared.u32 [%r1], 7;\n") +
                       "  ret;";
    std::vector<uint32_t> out(1, 0);
    Result r = Launch1(Kernel(body, ".shared .align 4 .b8 sm[4];"), 32, &out);
    EXPECT_EQ(Kinds(r), split ? "race " : "") << split;
  }
}

TEST(PtxEmu, BoundsAlignmentAndUninitialised) {
  std::string body = std::string(kPrologue) +
                     "  st.global.u32 [%rd0+16], %r0;\n"   // past the 4 elements of a
                     "  ld.global.u32 %r1, [%rd0+2];\n"     // misaligned
                     "  mov.u32 %r2, sm;\n  ld.shared.u32 %r3, [%r2];\n"  // never written
                     "  st.global.u32 [%rd0], %r3;\n  ret;";
  std::vector<uint32_t> out(4, 5);
  Result r = Launch1(Kernel(body, ".shared .align 4 .b8 sm[16];"), 1, &out);
  EXPECT_EQ(Kinds(r), "out_of_bounds misaligned uninitialized_read ");
  EXPECT_NE(r.reports[0].message.find("nearest: 'a' (16 bytes), at byte offset 16"), std::string::npos)
      << r.reports[0].message;
  EXPECT_EQ(out[1], 5u);  // the bad accesses were not performed
}

TEST(PtxEmu, DeadlockAndBarrierDivergence) {
  // warp 1 exits; warp 0 waits on barrier 1 for 64 threads that never come
  std::string dead = std::string(kPrologue) +
                     "  setp.ge.u32 %p1, %r0, 32;\n  @%p1 bra $L_end;\n  bar.sync 1, 64;\n$L_end:\n  ret;";
  std::vector<uint32_t> out(1, 0);
  Result r = Launch1(Kernel(dead), 64, &out);
  EXPECT_EQ(Kinds(r), "deadlock ");
  // lanes 0..15 reach a barrier the others skip
  std::string div = std::string(kPrologue) +
                    "  setp.ge.u32 %p1, %r0, 16;\n  @%p1 bra $L_end;\n  bar.sync 0;\n$L_end:\n  ret;";
  r = Launch1(Kernel(div), 32, &out);
  EXPECT_NE(Kinds(r).find("barrier_divergence"), std::string::npos) << Kinds(r);
}

// mbarrier (PTX ISA 9.7.13.15): init with 64 expected arrivals; warp 1 waits on phase 0 (parity 0) while warp 0
// has not arrived yet, so it must block and resume after the 64th arrival, reading what warp 0 wrote before
// arriving (ordered by the phase). The arrive's state is the phase it arrived on (0). With expect_tx bytes
// that no copy completes, the phase never completes: a deadlock naming the mbarrier.
TEST(PtxEmu, MbarrierPhasesBlockAndDeadlock) {
  for (bool tx : {false, true}) {
    std::string body = std::string(kPrologue) +
                       "  mov.u32 %r1, bar;\n  mov.u32 %r2, data;\n"
                       "  setp.ne.u32 %p1, %r0, 0;\n  @%p1 bra $L_init_done;\n"
                       "  mbarrier.init.shared::cta.b64 [%r1], 64;\n" +
                       (tx ? "  mbarrier.expect_tx.shared::cta.b64 [%r1], 16;\n" : "") +
                       "$L_init_done:\n  bar.sync 0;\n"
                       "  setp.ge.u32 %p2, %r0, 32;\n  @%p2 bra $L_waiter;\n"
                       "  add.s32 %r3, %r0, 100;\n  shl.b32 %r4, %r0, 2;\n  add.s32 %r5, %r2, %r4;\n"
                       "  st.shared.u32 [%r5], %r3;\n"
                       "  mbarrier.arrive.shared::cta.b64 %rd10, [%r1];\n  mbarrier.arrive.shared::cta.b64 %rd11, [%r1];\n"
                       "  cvt.u32.u64 %r6, %rd10;\n  add.s64 %rd12, %rd0, %rd3;\n  st.global.u32 [%rd12], %r6;\n  ret;\n"
                       "$L_waiter:\n  mov.u32 %r7, 0;\n"
                       "$L_wait:\n  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r1], %r7;\n  @!%p3 bra $L_wait;\n"
                       "  sub.u32 %r8, %r0, 32;\n  shl.b32 %r9, %r8, 2;\n  add.s32 %r10, %r2, %r9;\n"
                       "  ld.shared.u32 %r11, [%r10];\n  add.s64 %rd13, %rd0, %rd3;\n  st.global.u32 [%rd13], %r11;\n"
                       "  ret;";
    std::vector<uint32_t> out(64, 7);
    Result r = Launch1(Kernel(body, ".shared .align 8 .b8 bar[8];\n.shared .align 4 .b8 data[128];"), 64, &out);
    if (!tx) {
      EXPECT_EQ(r.total_reports, 0) << (r.reports.empty() ? "" : r.reports[0].message);
      for (uint32_t l = 0; l < 32; ++l) {
        EXPECT_EQ(out[l], 0u) << l;             // the arrival state: phase 0
        EXPECT_EQ(out[32 + l], 100 + l) << l;   // read after the phase completed
      }
    } else {
      ASSERT_EQ(Kinds(r), "deadlock ");
      EXPECT_NE(r.reports[0].message.find("16 transaction bytes missing"), std::string::npos) << r.reports[0].message;
    }
  }
}

// Thread-block clusters (PTX ISA "Cluster of Cooperative Thread Arrays", the special registers
// %cluster_ctarank / %cluster_nctarank / %clusterid, barrier.cluster, mapa, mbarrier.arrive
// .shared::cluster): a grid of 4 blocks in clusters of 2 (.reqnctapercluster 2, 1, 1). Each block records its
// rank, the cluster's size and its cluster id; after the cluster barrier (every block initialised its
// mbarrier), rank 0's thread 0 stores 100 + ctaid.x to global memory and arrives on rank 1's mbarrier through
// mapa; rank 1 waits on its own mbarrier and then reads that value: c[1] = 101, c[3] = 103 (rank 1 runs first
// after the cluster barrier, so without the remote arrival its wait would deadlock, which the second launch
// shows by arriving on rank 0's own barrier instead).
TEST(PtxEmu, ClusterRanksBarrierAndRemoteArrive) {
  for (int peer : {1, 0, 2}) {
    std::string body =
        std::string(kPrologue) +
        "  mov.u32 %r1, %cluster_ctarank;\n  mov.u32 %r2, %cluster_nctarank;\n"
        "  mov.u32 %r3, %clusterid.x;\n  mov.u32 %r4, %ctaid.x;\n  mov.u32 %r5, bar;\n"
        "  setp.ne.u32 %p1, %r0, 0;\n  @%p1 bra $L_sync;\n"
        "  mbarrier.init.shared::cta.b64 [%r5], 1;\n"
        "  mul.wide.u32 %rd4, %r4, 16;\n  add.s64 %rd5, %rd0, %rd4;\n"
        "  st.global.u32 [%rd5], %r1;\n  st.global.u32 [%rd5+4], %r2;\n  st.global.u32 [%rd5+8], %r3;\n"
        "$L_sync:\n  barrier.cluster.arrive.release.aligned;\n  barrier.cluster.wait.acquire.aligned;\n"
        "  @%p1 bra $L_done;\n  setp.ne.u32 %p2, %r1, 0;\n  @%p2 bra $L_consumer;\n"
        "  mul.wide.u32 %rd6, %r4, 4;\n  add.s64 %rd7, %rd1, %rd6;\n  add.u32 %r6, %r4, 100;\n"
        "  st.global.u32 [%rd7], %r6;\n"
        "  mapa.shared::cluster.u32 %r7, %r5, " +
        std::to_string(peer) +
        ";\n"
        "  mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r7];\n  bra $L_done;\n"
        "$L_consumer:\n"
        "  mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p3, [%r5], 0;\n"
        "  @!%p3 bra $L_consumer;\n"
        "  sub.u32 %r8, %r4, 1;\n  mul.wide.u32 %rd8, %r8, 4;\n  add.s64 %rd9, %rd1, %rd8;\n"
        "  ld.global.u32 %r9, [%rd9];\n  add.u32 %r9, %r9, 1;\n"
        "  mul.wide.u32 %rd10, %r4, 4;\n  add.s64 %rd11, %rd2, %rd10;\n  st.global.u32 [%rd11], %r9;\n"
        "$L_done:\n  barrier.cluster.arrive;\n  barrier.cluster.wait;\n  ret;";
    std::string ptx = Kernel(body, ".shared .align 8 .b8 bar[8];");
    ptx.replace(ptx.find(")\n{"), 3, ")\n.reqnctapercluster 2, 1, 1\n{");
    std::vector<uint32_t> a(16, 7), b(4, 0), c(4, 0);
    Launch L;
    L.entry = "k";
    L.grid = {4, 1, 1};
    L.block = {32, 1, 1};
    L.params = {reinterpret_cast<uint64_t>(a.data()), reinterpret_cast<uint64_t>(b.data()),
                reinterpret_cast<uint64_t>(c.data())};
    L.regions = {{L.params[0], 64, "a"}, {L.params[1], 16, "b"}, {L.params[2], 16, "c"}};
    Result r = tl::emu::ptx::Run(*Parse(ptx), L, Options());
    for (uint32_t blk = 0; blk < 4; ++blk) {
      EXPECT_EQ(a[blk * 4], blk % 2) << blk;      // %cluster_ctarank
      EXPECT_EQ(a[blk * 4 + 1], 2u) << blk;       // %cluster_nctarank
      EXPECT_EQ(a[blk * 4 + 2], blk / 2) << blk;  // %clusterid.x
    }
    if (peer == 1) {
      EXPECT_EQ(r.total_reports, 0) << (r.reports.empty() ? "" : r.reports[0].message);
      EXPECT_EQ(c, (std::vector<uint32_t>{0, 101, 0, 103}));
    } else {
      EXPECT_NE(Kinds(r).find(peer == 0 ? "deadlock" : "cluster_rank"), std::string::npos) << Kinds(r);
    }
  }
}

// `{b0, b1, ...}`: the bytes of a string and its NUL, as a PTX initialiser.
std::string Bytes(const std::string& text) {
  std::string s = "{";
  for (char c : text) s += std::to_string(static_cast<int>(static_cast<unsigned char>(c))) + ", ";
  return s + "0}";
}

// Device functions (PTX ISA 7.2, 9.7.12.5 call): `tp(a, b)` is 2a + b through its own .local variable, or -1
// where a > 1000 (a second ret). Nested: tp(tp(tid, 7), 7) = 4 tid + 21; tp(2000, 0) = -1.
TEST(PtxEmu, CallsOfDeviceFunctionsRunInlined) {
  const std::string func =
      ".func (.param .b32 tp_r) tp(.param .b32 tp_a, .param .b32 tp_b)\n{\n"
      "  .local .align 4 .b8 tp_depot[8];\n  .reg .pred %q<2>;\n  .reg .b32 %t<4>;\n  .reg .b64 %u<2>;\n"
      "  ld.param.b32 %t0, [tp_a];\n  ld.param.b32 %t1, [tp_b];\n"
      "  setp.gt.s32 %q0, %t0, 1000;\n  @%q0 bra $L_big;\n"
      "  mov.u64 %u0, tp_depot;\n  st.local.u32 [%u0+4], %t0;\n  ld.local.u32 %t2, [%u0+4];\n"
      "  mad.lo.s32 %t3, %t2, 2, %t1;\n  st.param.b32 [tp_r], %t3;\n  ret;\n"
      "$L_big:\n  st.param.b32 [tp_r], -1;\n  ret;\n}\n"
      ".func (.param .b32 tq_r) tq(.param .b32 tq_a)\n{\n  .reg .b32 %v<3>;\n"
      "  ld.param.b32 %v0, [tq_a];\n"
      "  { .param .b32 qa; st.param.b32 [qa], %v0; .param .b32 qb; st.param.b32 [qb], 7; .param .b32 qr;\n"
      "    call.uni (qr), tp, (qa, qb); ld.param.b32 %v1, [qr]; }\n"
      "  st.param.b32 [tq_r], %v1;\n  ret;\n}\n";
  std::string body =
      std::string(kPrologue) +
      "  { .param .b32 pa; st.param.b32 [pa], %r0; .param .b32 pr;\n"
      "    call.uni (pr), tq, (pa); ld.param.b32 %r1, [pr]; }\n"
      "  { .param .b32 pa; st.param.b32 [pa], %r1; .param .b32 pr;\n"
      "    call.uni (pr), tq, (pa); ld.param.b32 %r2, [pr]; }\n"
      "  { .param .b32 pa; st.param.b32 [pa], 2000; .param .b32 pb; st.param.b32 [pb], 0;\n"
      "    .param .b32 pr; call (pr), tp, (pa, pb); ld.param.b32 %r3, [pr]; }\n"
      "  mul.wide.u32 %rd4, %r0, 12;\n  add.s64 %rd5, %rd0, %rd4;\n"
      "  st.global.u32 [%rd5], %r1;\n  st.global.u32 [%rd5+4], %r2;\n  st.global.u32 [%rd5+8], %r3;\n"
      "  ret;";
  std::vector<int32_t> out(64 * 3, 0);
  Result r = Launch1(Kernel(body, func), 64, &out);
  EXPECT_EQ(r.total_reports, 0) << Kinds(r);
  for (int t = 0; t < 64; ++t) {
    EXPECT_EQ(out[t * 3], 2 * t + 7) << t;
    EXPECT_EQ(out[t * 3 + 1], 2 * (2 * t + 7) + 7) << t;
    EXPECT_EQ(out[t * 3 + 2], -1) << t;
  }
  // a function that calls itself cannot be inlined: a clear error
  const std::string rec =
      ".func (.param .b32 f_r) f(.param .b32 f_a)\n{\n  .reg .b32 %w<2>;\n"
      "  { .param .b32 x; st.param.b32 [x], 1; .param .b32 y; call.uni (y), f, (x); }\n"
      "  st.param.b32 [f_r], 0;\n  ret;\n}\n";
  std::string call = std::string(kPrologue) +
                     "  { .param .b32 pa; st.param.b32 [pa], 1; .param .b32 pr;\n"
                     "    call.uni (pr), f, (pa); }\n  ret;";
  try {
    Parse(Kernel(call, rec));
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("is recursive"), std::string::npos) << e.what();
  }
}

// vprintf (CUDA's device printf): the arguments packed at their natural alignment, floats as doubles, strings
// as generic pointers; module-scope initialised .global strings and an initialised .const table.
TEST(PtxEmu, VprintfAndInitialisedModuleVariables) {
  const std::string decls =
      ".extern .func (.param .b32 func_retval0) vprintf\n(\n  .param .b64 vprintf_param_0,\n"
      "  .param .b64 vprintf_param_1\n);\n"
      ".global .align 1 .b8 fmt[14] = " +
      Bytes("t%d %.3f %s|\n") +
      ";\n"
      ".global .align 1 .b8 word[3] = " +
      Bytes("hi") +
      ";\n"
      ".const .align 4 .b32 tab[4] = {10, 20, 30, 40};\n"
      ".global .align 4 .f32 half = 0f3F000000;\n";
  std::string body =
      std::string(kPrologue) +
      "  .local .align 8 .b8 depot[24];\n"
      "  mov.u64 %rd10, depot;\n  cvta.local.u64 %rd11, %rd10;\n"
      "  shl.b32 %r1, %r0, 2;\n  mov.u32 %r2, tab;\n  add.s32 %r3, %r2, %r1;\n"
      "  ld.const.u32 %r4, [%r3];\n  st.local.u32 [%rd10], %r4;\n"
      "  ld.global.f32 %f1, [half];\n  cvt.f64.f32 %fd1, %f1;\n  st.local.f64 [%rd10+8], %fd1;\n"
      "  mov.u64 %rd12, word;\n  cvta.global.u64 %rd13, %rd12;\n  st.local.u64 [%rd10+16], %rd13;\n"
      "  mov.u64 %rd14, fmt;\n  cvta.global.u64 %rd15, %rd14;\n"
      "  { .param .b64 param0; st.param.b64 [param0], %rd15; .param .b64 param1;\n"
      "    st.param.b64 [param1], %rd11; .param .b32 retval0;\n"
      "    call.uni (retval0), vprintf, (param0, param1); ld.param.b32 %r5, [retval0]; }\n"
      "  add.s64 %rd16, %rd0, %rd3;\n  st.global.u32 [%rd16], %r5;\n  ret;";
  std::vector<int32_t> out(3, 0);
  testing::internal::CaptureStdout();
  Result r = Launch1(Kernel(body, decls), 3, &out);
  std::string printed = testing::internal::GetCapturedStdout();
  EXPECT_EQ(r.total_reports, 0) << Kinds(r);
  EXPECT_EQ(printed, "t10 0.500 hi|\nt20 0.500 hi|\nt30 0.500 hi|\n");
  EXPECT_EQ(out[0], 14);  // the characters it printed
}

// Extended-precision arithmetic (PTX ISA 9.7.2): a 64-bit add and subtract in 32-bit halves through CC.CF,
// and mad.lo.cc / madc.hi. 0x1_FFFFFFFF + 0x2_00000001 = 0x4_00000000; 0x5_00000000 - 0x1_00000001 =
// 0x3_FFFFFFFF; 0x10001 * 0x10000 = 0x1_00010000: lo 0x00010000 + 0xFFFF0000 carries, hi 1 + 5 + 1 = 7.
TEST(PtxEmu, CarryChains) {
  std::string body =
      std::string(kPrologue) +
      "  add.cc.u32 %r1, -1, 1;\n  addc.u32 %r2, 1, 2;\n"
      "  sub.cc.u32 %r3, 0, 1;\n  subc.u32 %r4, 5, 1;\n"
      "  mad.lo.cc.u32 %r5, 65537, 65536, -65536;\n  madc.hi.u32 %r6, 65537, 65536, 5;\n"
      "  add.cc.u32 %r7, 1, 1;\n  addc.cc.u32 %r8, -1, 0;\n  addc.u32 %r9, 0, 0;\n"
      "  st.global.u32 [%rd0], %r1;\n  st.global.u32 [%rd0+4], %r2;\n  st.global.u32 [%rd0+8], %r3;\n"
      "  st.global.u32 [%rd0+12], %r4;\n  st.global.u32 [%rd0+16], %r5;\n  st.global.u32 [%rd0+20], %r6;\n"
      "  st.global.u32 [%rd0+24], %r8;\n  st.global.u32 [%rd0+28], %r9;\n  ret;";
  std::vector<uint32_t> out(8, 0xDEAD);
  Result r = Launch1(Kernel(body), 1, &out);
  EXPECT_EQ(r.total_reports, 0) << Kinds(r);
  EXPECT_EQ(out, (std::vector<uint32_t>{0u, 4u, 0xFFFFFFFFu, 3u, 0u, 7u, 0xFFFFFFFFu, 0u}));
}

// trap stops the thread and is reported; the others go on.
TEST(PtxEmu, TrapIsReported) {
  std::string body = std::string(kPrologue) +
                     "  setp.eq.u32 %p1, %r0, 1;\n  @%p1 trap;\n"
                     "  add.s64 %rd4, %rd0, %rd3;\n  st.global.u32 [%rd4], 9;\n  ret;";
  std::vector<uint32_t> out(4, 0);
  Result r = Launch1(Kernel(body), 4, &out);
  EXPECT_EQ(Kinds(r), "assert ");
  EXPECT_EQ(out, (std::vector<uint32_t>{9, 0, 9, 9}));
}

// cp.async.mbarrier.arrive.noinc (PTX ISA 9.7.9.25.3.2): each of 32 threads' copy completes, then counts as
// one of the barrier's 32 arrivals; without .noinc the pending count is raised first, so nothing arrives.
TEST(PtxEmu, CpAsyncMbarrierArrive) {
  for (bool noinc : {true, false}) {
    std::string body =
        std::string(kPrologue) +
        "  mov.u32 %r1, bar;\n  mov.u32 %r2, data;\n"
        "  setp.ne.u32 %p1, %r0, 0;\n  @%p1 bra $L_init_done;\n"
        "  mbarrier.init.shared::cta.b64 [%r1], 32;\n$L_init_done:\n  bar.sync 0;\n"
        "  shl.b32 %r3, %r0, 2;\n  add.s32 %r4, %r2, %r3;\n  add.s64 %rd4, %rd1, %rd3;\n"
        "  cp.async.ca.shared.global [%r4], [%rd4], 4;\n" +
        (noinc ? "  cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%r1];\n"
               : "  cp.async.mbarrier.arrive.shared::cta.b64 [%r1];\n") +
        "  mov.u32 %r7, 0;\n"
        "$L_wait:\n  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r1], %r7;\n  @!%p3 bra $L_wait;\n"
        "  xor.b32 %r8, %r0, 1;\n  shl.b32 %r9, %r8, 2;\n  add.s32 %r10, %r2, %r9;\n"
        "  ld.shared.u32 %r11, [%r10];\n  add.s64 %rd5, %rd0, %rd3;\n  st.global.u32 [%rd5], %r11;\n"
        "  ret;";
    std::vector<uint32_t> out(32, 0), in(32);
    for (uint32_t i = 0; i < 32; ++i) in[i] = 1000 + i;
    Result r =
        Launch1(Kernel(body, ".shared .align 8 .b8 bar[8];\n.shared .align 4 .b8 data[128];"), 32, &out, &in);
    if (noinc) {
      EXPECT_EQ(r.total_reports, 0) << (r.reports.empty() ? "" : r.reports[0].message);
      for (uint32_t l = 0; l < 32; ++l) EXPECT_EQ(out[l], 1000 + (l ^ 1)) << l;
    } else {
      EXPECT_EQ(Kinds(r), "deadlock ");
    }
  }
}

// tcgen05 (PTX ISA, "TensorCore 5th Generation Family Instructions"), hand-worked: D (128 x 8, f32, tensor memory)
// = A (128 x 16 f16, K-major) * B^T (B: 8 x 16 f16, K-major), both in shared memory with the 32-byte swizzle.
// The host lays the operands out as the ISA's figures draw them: 32-byte rows (one row of 16 K-elements),
// 8-row groups 256 bytes apart (the descriptor's stride byte offset), and in every 8-row group rows 4..7 swap
// their two 16-byte halves (the 32B swizzle pattern). Descriptors: start >> 4 at bits 0-13, LBO 16 B, SBO 256 B,
// 0b001 at 46-48, swizzle mode 6 (32B) at 61-63. Instruction descriptor: D F32 (1 << 4), A / B F16 (0), K-major,
// N >> 3 = 1 at bit 17, M >> 4 = 8 at bit 24. The data-path layout for M = 128: row m in lane m, column n in column
// n; tcgen05.ld .32x32b.x8 by warp w gives lane 32 w + t its 8 columns.
TEST(PtxEmu, Tcgen05MmaHandWorked) {
  auto f16 = [](int v) -> uint16_t {  // small integers as f16 bits
    static const uint16_t mag[4] = {0x0000, 0x3C00, 0x4000, 0x4200};
    return static_cast<uint16_t>(mag[v < 0 ? -v : v] | (v < 0 ? 0x8000 : 0));
  };
  auto a_val = [](int m, int k) { return (m * 3 + k * 5) % 7 - 3; };
  auto b_val = [](int n, int k) { return (n * 2 + k) % 5 - 2; };
  auto place = [](int row, int k) {  // byte offset of element (row, k) in the swizzled K-major layout
    const int half = (k * 2) / 16, in_half = (k * 2) % 16;
    const int swapped = (row % 8) >= 4 ? half ^ 1 : half;
    return (row / 8) * 256 + (row % 8) * 32 + swapped * 16 + in_half;
  };
  std::vector<uint8_t> a(4096), b(256);
  for (int m = 0; m < 128; ++m)
    for (int k = 0; k < 16; ++k) {
      const uint16_t h = f16(a_val(m, k));
      std::memcpy(&a[static_cast<size_t>(place(m, k))], &h, 2);
    }
  for (int n = 0; n < 8; ++n)
    for (int k = 0; k < 16; ++k) {
      const uint16_t h = f16(b_val(n, k));
      std::memcpy(&b[static_cast<size_t>(place(n, k))], &h, 2);
    }
  const uint64_t desc = (uint64_t{1} << 16) | (uint64_t{16} << 32) | (uint64_t{1} << 46) | (uint64_t{6} << 61);
  const uint64_t desc_a = desc | 0, desc_b = desc | (4096 >> 4);
  const uint32_t idesc = (1u << 4) | (1u << 17) | (8u << 24);
  std::string body =
      std::string(kPrologue) +
      // every thread copies 32 bytes of A, threads 0..15 16 bytes of B
      "  mul.wide.u32 %rd4, %r0, 32;\n  add.s64 %rd5, %rd1, %rd4;\n  cvt.u32.u64 %r1, %rd4;\n"
      "  ld.global.v4.u32 {%r2, %r3, %r4, %r5}, [%rd5];\n  st.shared.v4.u32 [%r1], {%r2, %r3, %r4, %r5};\n"
      "  ld.global.v4.u32 {%r2, %r3, %r4, %r5}, [%rd5+16];\n  st.shared.v4.u32 [%r1+16], {%r2, %r3, %r4, %r5};\n"
      "  setp.lt.u32 %p1, %r0, 16;\n  @!%p1 bra $L_b_done;\n"
      "  mul.wide.u32 %rd6, %r0, 16;\n  add.s64 %rd7, %rd2, %rd6;\n  cvt.u32.u64 %r6, %rd6;\n"
      "  ld.global.v4.u32 {%r2, %r3, %r4, %r5}, [%rd7];\n  st.shared.v4.u32 [%r6+4096], {%r2, %r3, %r4, %r5};\n"
      "$L_b_done:\n"
      "  setp.ne.u32 %p2, %r0, 0;\n  @%p2 bra $L_init_done;\n  mbarrier.init.shared::cta.b64 [4352], 1;\n"
      "$L_init_done:\n"
      "  setp.ge.u32 %p3, %r0, 32;\n  @%p3 bra $L_alloc_done;\n"
      "  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [4360], 32;\n"
      "  tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n"
      "$L_alloc_done:\n"
      "  fence.proxy.async.shared::cta;\n  tcgen05.fence::before_thread_sync;\n  bar.sync 0;\n"
      "  tcgen05.fence::after_thread_sync;\n  ld.shared.u32 %r20, [4360];\n"
      "  @%p2 bra $L_issued;\n"
      "  mov.b64 %rd10, " + std::to_string(desc_a) + ";\n  mov.b64 %rd11, " + std::to_string(desc_b) + ";\n"
      "  mov.b32 %r21, " + std::to_string(idesc) + ";\n  setp.ne.u32 %p4, 0, 0;\n"
      "  tcgen05.mma.cta_group::1.kind::f16 [%r20], %rd10, %rd11, %r21, %p4;\n"
      "  tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [4352];\n"
      "$L_issued:\n  mov.u32 %r22, 0;\n"
      "$L_wait:\n  mbarrier.try_wait.parity.shared::cta.b64 %p5, [4352], %r22;\n  @!%p5 bra $L_wait;\n"
      "  tcgen05.fence::after_thread_sync;\n"
      "  shr.u32 %r23, %r0, 5;\n  shl.b32 %r24, %r23, 21;\n  add.s32 %r25, %r20, %r24;\n"  // lane 32 w << 16
      "  tcgen05.ld.sync.aligned.32x32b.x8.b32 {%r30, %r31, %r32, %r33, %r34, %r35, %r36, %r37}, [%r25];\n"
      "  tcgen05.wait::ld.sync.aligned;\n"
      "  mul.wide.u32 %rd12, %r0, 32;\n  add.s64 %rd13, %rd0, %rd12;\n"
      "  st.global.v4.u32 [%rd13], {%r30, %r31, %r32, %r33};\n  st.global.v4.u32 [%rd13+16], {%r34, %r35, %r36, %r37};\n"
      "  tcgen05.fence::before_thread_sync;\n  bar.sync 0;\n"
      "  @%p3 bra $L_end;\n  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r20, 32;\n"
      "$L_end:\n  ret;";
  const std::string shared = ".shared .align 1024 .b8 sa[4096];\n.shared .align 256 .b8 sb[256];\n"
                             ".shared .align 8 .b8 bar[8];\n.shared .align 4 .b8 taddr[4];";
  std::vector<float> out(128 * 8, -1.0f);
  Result r = Launch1(Kernel(body, shared), 128, &out, &a, &b);
  EXPECT_EQ(r.total_reports, 0) << (r.reports.empty() ? "" : r.reports[0].message);
  for (int m = 0; m < 128; ++m)
    for (int n = 0; n < 8; ++n) {
      int want = 0;
      for (int k = 0; k < 16; ++k) want += a_val(m, k) * b_val(n, k);
      ASSERT_EQ(out[static_cast<size_t>(m * 8 + n)], static_cast<float>(want)) << m << ", " << n;
    }
  // a barrier instead of the mbarrier wait orders the reads after the commit, not after the mma's completion:
  // every warp's tcgen05.ld is reported
  std::string no_wait = body;
  const std::string wait =
      "$L_wait:\n  mbarrier.try_wait.parity.shared::cta.b64 %p5, [4352], %r22;\n  @!%p5 bra $L_wait;\n";
  ASSERT_NE(no_wait.find(wait), std::string::npos);
  no_wait.replace(no_wait.find(wait), wait.size(), "  bar.sync 1;\n");
  Result r1 = Launch1(Kernel(no_wait, shared), 128, &out, &a, &b);
  ASSERT_EQ(Kinds(r1), "tcgen05_not_waited tcgen05_not_waited tcgen05_not_waited tcgen05_not_waited ");
  EXPECT_NE(r1.reports[0].message.find("before this thread waited"), std::string::npos)
      << r1.reports[0].message;
  // without the commit nothing arrives on the mbarrier: the waiters deadlock, and the mma is never committed
  std::string no_commit = body;
  const size_t at = no_commit.find("  tcgen05.commit");
  no_commit.erase(at, no_commit.find('\n', at) + 1 - at);
  Result r2 = Launch1(Kernel(no_commit, shared), 128, &out, &a, &b);
  EXPECT_NE(Kinds(r2).find("deadlock"), std::string::npos) << Kinds(r2);
  EXPECT_NE(Kinds(r2).find("tcgen05_not_committed"), std::string::npos) << Kinds(r2);
  // M = 64 with an F16 D (instruction descriptor: D type 0, M >> 4 = 4): data-path layout F puts row m in lane
  // 32 (m / 16) + m % 16, each value in bits 0-15 of its column. tcgen05.ld .16x32bx2.x4 with immHalfSplitoff 4:
  // lane t < 16 of warp w reads lane 32 w + t, columns 0-3; lane t >= 16 lane 32 w + t - 16, columns 4-7.
  std::string m64 = body;
  const std::string id32 = "mov.b32 %r21, " + std::to_string(idesc) + ";";
  const std::string ld32 =
      "tcgen05.ld.sync.aligned.32x32b.x8.b32 {%r30, %r31, %r32, %r33, %r34, %r35, %r36, %r37}, [%r25];";
  const std::string st_hi = "  st.global.v4.u32 [%rd13+16], {%r34, %r35, %r36, %r37};\n";
  ASSERT_NE(m64.find(id32), std::string::npos);
  ASSERT_NE(m64.find(ld32), std::string::npos);
  ASSERT_NE(m64.find(st_hi), std::string::npos);
  m64.replace(m64.find(id32), id32.size(),
              "mov.b32 %r21, " + std::to_string((0u << 4) | (1u << 17) | (4u << 24)) + ";");
  m64.replace(m64.find(ld32), ld32.size(),
              "tcgen05.ld.sync.aligned.16x32bx2.x4.b32 {%r30, %r31, %r32, %r33}, [%r25], 4;");
  m64.erase(m64.find(st_hi), st_hi.size());
  auto half_value = [](uint32_t h) {  // IEEE binary16, normal and subnormal
    const int e = static_cast<int>((h >> 10) & 31), m = static_cast<int>(h & 1023);
    const double v = e ? std::ldexp(1024 + m, e - 25) : std::ldexp(m, -24);
    return (h & 0x8000) ? -v : v;
  };
  std::vector<uint32_t> words(128 * 8, 0xDEADBEEFu);
  Result r3 = Launch1(Kernel(m64, shared), 128, &words, &a, &b);
  EXPECT_EQ(r3.total_reports, 0) << (r3.reports.empty() ? "" : r3.reports[0].message);
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < 4; ++i) {
      const int row = 16 * (t / 32) + t % 16, col = (t % 32 >= 16 ? 4 : 0) + i;
      int want = 0;
      for (int k = 0; k < 16; ++k) want += a_val(row, k) * b_val(col, k);
      const uint32_t w = words[static_cast<size_t>(t * 8 + i)];
      ASSERT_EQ(w >> 16, 0u) << "thread " << t << " word " << i;
      ASSERT_EQ(half_value(w & 0xFFFF), static_cast<double>(want)) << "thread " << t << " word " << i;
    }
  // kind::f8f6f4 with an E2M1 A (instruction descriptor: A type 5 at bits 7-9, B E4M3 0, F32 D) and K = 32:
  // A's rows hold each 16 values of K two a byte (the first in the low nibble) in the first 8 bytes of a
  // 16-byte group, the padded form the TMA format 16U4_ALIGN16B writes (cuda.h: "8 byte gaps between every 8
  // byte chunk"). The gaps hold 0xFF, which read as a nibble would be -6: a read of one would change the
  // sums.
  std::string fp4 = body;
  const std::string f16kind = "kind::f16";
  ASSERT_NE(fp4.find(f16kind), std::string::npos);
  fp4.replace(fp4.find(f16kind), f16kind.size(), "kind::f8f6f4");
  fp4.replace(fp4.find(id32), id32.size(),
              "mov.b32 %r21, " + std::to_string((1u << 4) | (5u << 7) | (1u << 17) | (8u << 24)) + ";");
  auto byte_at = [&](int row, int j) { return place(row, j / 2) + j % 2; };  // byte j of a 32-byte row
  auto e2m1 = [](int v) {
    static const uint8_t c[4] = {0x0, 0x2, 0x4, 0x5};
    return c[v < 0 ? -v : v] | (v < 0 ? 8 : 0);
  };
  auto e4m3 = [](int v) {
    static const uint8_t c[4] = {0x00, 0x38, 0x40, 0x44};
    return c[v < 0 ? -v : v] | (v < 0 ? 0x80 : 0);
  };
  std::vector<uint8_t> a4(4096, 0xFF), b8(256);
  for (int m = 0; m < 128; ++m)
    for (int k = 0; k < 32; ++k) {
      uint8_t& x = a4[static_cast<size_t>(byte_at(m, 16 * (k / 16) + (k % 16) / 2))];
      if (k % 2 == 0)
        x = static_cast<uint8_t>(e2m1(a_val(m, k)));
      else
        x = static_cast<uint8_t>(x | (e2m1(a_val(m, k)) << 4));
    }
  for (int n = 0; n < 8; ++n)
    for (int k = 0; k < 32; ++k)
      b8[static_cast<size_t>(byte_at(n, k))] = static_cast<uint8_t>(e4m3(b_val(n, k)));
  std::fill(out.begin(), out.end(), -1.0f);
  Result r4 = Launch1(Kernel(fp4, shared), 128, &out, &a4, &b8);
  EXPECT_EQ(r4.total_reports, 0) << (r4.reports.empty() ? "" : r4.reports[0].message);
  for (int m = 0; m < 128; ++m)
    for (int n = 0; n < 8; ++n) {
      int want = 0;
      for (int k = 0; k < 32; ++k) want += a_val(m, k) * b_val(n, k);
      ASSERT_EQ(out[static_cast<size_t>(m * 8 + n)], static_cast<float>(want)) << "fp4 " << m << ", " << n;
    }
}

TEST(PtxEmu, WhatItCannotRunIsAClearError) {
  std::string body = std::string(kPrologue) + "  tex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [tx, {%r0}];\n  ret;";
  try {
    Parse(Kernel(body));
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("instruction 'tex' is not supported"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("line "), std::string::npos);
  }
  std::string bad_mod = std::string(kPrologue) + "  add.foo.s32 %r1, %r0, 1;\n  ret;";
  EXPECT_THROW(Parse(Kernel(bad_mod)), UserError);
  std::vector<uint32_t> out(1, 0);
  std::string partial_mma = std::string(kPrologue) +
                            "  setp.lt.u32 %p1, %r0, 16;\n  @!%p1 bra $L_end;\n"
                            "  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f5, %f6, %f7, %f8}, {%r1, %r2, %r3, "
                            "%r4}, {%r5, %r6}, {%f1, %f2, %f3, %f4};\n$L_end:\n  ret;";
  Result r = Launch1(Kernel(partial_mma), 32, &out);
  EXPECT_EQ(Kinds(r), "inactive_lanes ");
}

}  // namespace
}  // namespace tl::emu::ptx

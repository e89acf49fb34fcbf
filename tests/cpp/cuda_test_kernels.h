// A warp-level tensor-core kernel in the shape our CUDA code generator emits (inline PTX for
// cp.async, ldmatrix and mma.sync; no CUDA headers), shared by the toolchain tests and
// benchmarks/nvrtc_latency.cc.
#pragma once

namespace tl_test {

/// C[16x16] (f32) = A[16xK] * B[16xK]^T (f16), one warp; K a multiple of 16, A and B row-major.
inline const char* kWarpMmaKernel = R"CUDA(
typedef unsigned short half_t;
__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(smem_addr(dst)), "l"(src));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cp_async_wait0() { asm volatile("cp.async.wait_group 0;\n" ::); }
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_addr(p)));
}
__device__ __forceinline__ void mma_16816(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
extern "C" __global__ void __launch_bounds__(32) warp_gemm(const half_t* A, const half_t* B, float* C, int K) {
  __shared__ __align__(16) half_t As[16 * 16];
  __shared__ __align__(16) half_t Bs[16 * 16];
  const int lane = threadIdx.x;
  float acc[2][4] = {};
  for (int k0 = 0; k0 < K; k0 += 16) {
    int row = lane >> 1, col = (lane & 1) * 8;
    cp_async16(&As[row * 16 + col], &A[row * K + k0 + col]);
    cp_async16(&Bs[row * 16 + col], &B[row * K + k0 + col]);
    cp_async_commit();
    cp_async_wait0();
    __syncwarp();
    unsigned a[4], b[4];
    int r = lane & 15, c = (lane >> 4) * 8;
    ldmatrix_x4(a, &As[r * 16 + c]);
    ldmatrix_x4(b, &Bs[r * 16 + c]);
    const unsigned b0[2] = {b[0], b[2]}, b1[2] = {b[1], b[3]};
    mma_16816(acc[0], a, b0);
    mma_16816(acc[1], a, b1);
    __syncwarp();
  }
  int g = lane >> 2, t = lane & 3;
  for (int n = 0; n < 2; ++n) {
    C[g * 16 + n * 8 + t * 2] = acc[n][0];
    C[g * 16 + n * 8 + t * 2 + 1] = acc[n][1];
    C[(g + 8) * 16 + n * 8 + t * 2] = acc[n][2];
    C[(g + 8) * 16 + n * 8 + t * 2 + 1] = acc[n][3];
  }
}
)CUDA";

}  // namespace tl_test

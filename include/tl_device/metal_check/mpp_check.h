// The Metal 4 part of the MSL syntax and type check (msl_check.h): declarations of the tensor types of
// <metal_tensor> and of MetalPerformancePrimitives' matmul2d, written from Apple's published description
// of the API (the Metal 4 documentation and the comments of MPPTensorOpsMatMul2d.h), for the subset the
// TileLang-C++ code generator uses (src/target/metal/codegen_metal.cc, the Metal 4 T.gemm). Apple's headers
// cannot be shipped, and their implementation (externally defined AIR functions) would not compile here.
//
// What it checks beyond C++ well-formedness: tensors are rank 2 with one stride per dimension; a
// matmul2d's operand and destination element types form a combination the API's type table allows; a
// cooperative tensor is loaded from / stored to tensors of its own element type; the cooperative tensors
// passed to run() were made by an operation with the same descriptor, in the role they are passed in
// (left operand or destination); left-operand cooperative tensors need a static K. Needs C++20 (the
// descriptor is a class-type template argument): `clang++ -std=c++20`.
#pragma once
#include "msl_check.h"

namespace metal {

template <typename T, size_t N>
struct array {
  T v_[N];
};

template <typename T, typename U>
struct is_same_ {
  static constexpr bool value = false;
};
template <typename T>
struct is_same_<T, T> {
  static constexpr bool value = true;
};
template <typename T>
struct remove_const_ {
  using type = T;
};
template <typename T>
struct remove_const_<const T> {
  using type = T;
};

/// Extents of dynamic size: `dextents<int32_t, 2>(cols, rows)`, innermost first.
template <typename IndexT, size_t Rank>
struct dextents {
  static constexpr size_t rank = Rank;
  using index_type = IndexT;
  template <typename... E>
  constexpr dextents(E... e) : e_{static_cast<IndexT>(e)...} {
    static_assert(sizeof...(E) == Rank, "dextents takes one extent per dimension");
  }
  IndexT e_[Rank];
};

/// How a tensor holds its data: tensor_inline (a pointer with extents and strides in the shader),
/// tensor_handle (an MTLTensor bound by the host), tensor_offset.
struct tensor_inline {};
struct tensor_handle {};
struct tensor_offset {};

template <typename ElemT, typename Extents, typename Kind = tensor_handle>
struct tensor {
  using element_type = ElemT;
  using extents_type = Extents;
  static_assert(is_same_<Kind, tensor_inline>::value || is_same_<Kind, tensor_handle>::value ||
                    is_same_<Kind, tensor_offset>::value,
                "a tensor's third parameter is tensor_inline, tensor_handle or tensor_offset");
  tensor(ElemT* data, const Extents& extents,
         const array<typename Extents::index_type, Extents::rank>& strides);
  tensor(ElemT* data, const Extents& extents);
};

/// The threads that run a tensor operation together.
template <int N>
struct execution_simdgroups {
  static_assert(N >= 1, "at least one SIMD-group");
};
using execution_simdgroup = execution_simdgroups<1>;

/// A tensor whose elements the threads of an execution scope hold together, in a layout the API does not
/// specify: touched only by load / store from tensors, the operations and the index API.
template <typename ElemT, typename Role>
struct cooperative_tensor {
  using element_type = ElemT;
  template <typename T, typename E, typename K>
  void load(const tensor<T, E, K>& src) {
    static_assert(is_same_<typename remove_const_<T>::type, ElemT>::value,
                  "a cooperative tensor is loaded from a tensor of its own element type");
    static_assert(E::rank == 2, "a rank-2 tensor");
  }
  template <typename T, typename E, typename K>
  void store(const tensor<T, E, K>& dst) const {
    static_assert(is_same_<T, ElemT>::value,
                  "a cooperative tensor is stored to a tensor of its own element type");
    static_assert(E::rank == 2, "a rank-2 tensor");
    static_assert(Role::destination, "only destination cooperative tensors are stored");
  }
  uint16_t get_capacity() const;
  bool is_valid_element(uint16_t i) const;
  ElemT& operator[](uint16_t i);
};

}  // namespace metal

namespace mpp {
namespace tensor_ops {

template <typename T>
constexpr T dynamic_length_v = T(-1);

struct matmul2d_descriptor {
  enum class mode { multiply, multiply_accumulate };
  int m, n, k;
  bool transpose_left, transpose_right, relaxed_precision;
  mode matmul_mode;
  constexpr matmul2d_descriptor(int m_, int n_, int k_ = dynamic_length_v<int>, bool transpose_left_ = false,
                                bool transpose_right_ = false, bool relaxed_precision_ = false,
                                mode matmul_mode_ = mode::multiply)
      : m(m_),
        n(n_),
        k(k_),
        transpose_left(transpose_left_),
        transpose_right(transpose_right_),
        relaxed_precision(relaxed_precision_),
        matmul_mode(matmul_mode_) {}
};

namespace detail {
// The role a cooperative tensor was made for, and the operation's shape.
template <int M, int N, int K, bool TL, bool TR, bool Dest>
struct role {
  static constexpr bool destination = Dest;
};
template <typename T>
struct is_tensor {
  static constexpr bool value = false;
};
template <typename T, typename E, typename K>
struct is_tensor<metal::tensor<T, E, K>> {
  static constexpr bool value = true;
};
// The element type an operand type names: a tensor's or a cooperative tensor's element type, or the type itself
// (the get_*_cooperative_tensor templates take either).
template <typename T>
struct elem {
  using type = T;
};
template <typename T, typename E, typename K>
struct elem<metal::tensor<T, E, K>> {
  using type = typename metal::remove_const_<T>::type;
};
template <typename T, typename R>
struct elem<metal::cooperative_tensor<T, R>> {
  using type = T;
};
template <typename A, typename B, typename C>
constexpr bool allowed_types() {  // the API's type table, for the inputs this project emits
  using metal::is_same_;
  if (is_same_<A, half>::value && is_same_<B, half>::value)
    return is_same_<C, half>::value || is_same_<C, float>::value;
  if (is_same_<A, bfloat>::value && is_same_<B, bfloat>::value)
    return is_same_<C, bfloat>::value || is_same_<C, float>::value;
  if (is_same_<A, float>::value && is_same_<B, float>::value) return is_same_<C, float>::value;
  if (is_same_<A, int8_t>::value && is_same_<B, int8_t>::value)
    return is_same_<C, int32_t>::value || is_same_<C, float>::value || is_same_<C, half>::value;
  return false;
}
}  // namespace detail

template <matmul2d_descriptor D, typename Scope>
struct matmul2d {
  static_assert(D.m > 0 && D.n > 0, "matmul2d needs positive m and n");
  using left_role = detail::role<D.m, D.n, D.k, D.transpose_left, D.transpose_right, false>;
  using dest_role = detail::role<D.m, D.n, D.k, D.transpose_left, D.transpose_right, true>;

  // <left operand, right operand, destination element type>: the operands as tensor, cooperative tensor or
  // element types; a left-operand cooperative tensor holds the left operand's element type.
  template <typename LeftT, typename RightT, typename DestElemT>
  metal::cooperative_tensor<typename detail::elem<LeftT>::type, left_role> get_left_input_cooperative_tensor() const {
    static_assert(D.k > 0, "a left-operand cooperative tensor needs a static k in the descriptor");
    static_assert(detail::allowed_types<typename detail::elem<LeftT>::type, typename detail::elem<RightT>::type,
                                        DestElemT>(),
                  "matmul2d does not take this combination of element types");
    return {};
  }
  template <typename LeftT, typename RightT, typename DestElemT>
  metal::cooperative_tensor<DestElemT, dest_role> get_destination_cooperative_tensor() const {
    static_assert(detail::allowed_types<typename detail::elem<LeftT>::type, typename detail::elem<RightT>::type,
                                        DestElemT>(),
                  "matmul2d does not take this combination of element types");
    return {};
  }
  // C = A * B (+ C): each operand a tensor or a cooperative tensor made by this operation in its role.
  template <typename LT, typename RT, typename DT>
  void run(const LT& left, const RT& right, DT& destination) const {
    static_assert(
        detail::is_tensor<LT>::value ||
            metal::is_same_<LT, metal::cooperative_tensor<typename LT::element_type, left_role>>::value,
        "matmul2d's left operand is a tensor or a left-operand cooperative tensor of this operation");
    static_assert(detail::is_tensor<RT>::value, "the right operand is a tensor here");
    static_assert(
        detail::is_tensor<DT>::value ||
            metal::is_same_<DT, metal::cooperative_tensor<typename DT::element_type, dest_role>>::value,
        "matmul2d's destination is a tensor or a destination cooperative tensor of this operation");
    static_assert(detail::allowed_types<typename detail::elem<LT>::type, typename detail::elem<RT>::type,
                                        typename detail::elem<DT>::type>(),
                  "matmul2d does not take this combination of element types");
  }
};

}  // namespace tensor_ops
}  // namespace mpp

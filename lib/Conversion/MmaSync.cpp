//===- MmaSync.cpp - mma.sync m16n8k16 fragments for the GPU kernels ------===//

#include "MmaSync.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

Value mlir::attn::buildFragment(OpBuilder &b, Location loc,
                                ArrayRef<Value> pairs) {
  auto pairType = cast<VectorType>(pairs.front().getType());
  auto type = VectorType::get({static_cast<int64_t>(pairs.size()), 2},
                              pairType.getElementType());
  Value frag = arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
  for (auto [i, pair] : llvm::enumerate(pairs))
    frag = vector::InsertOp::create(b, loc, pair, frag,
                                    ArrayRef<int64_t>{int64_t(i)});
  return frag;
}

/// Row `row` of a fragment as the i32 register nvvm.mma.sync takes (element
/// 0 in the low half, as in a .bf16x2 register).
static Value packedRow(OpBuilder &b, Location loc, Value frag, int64_t row) {
  Value pair = vector::ExtractOp::create(b, loc, frag, ArrayRef<int64_t>{row});
  auto i32x1 = VectorType::get({1}, b.getI32Type());
  Value cast = vector::BitCastOp::create(b, loc, i32x1, pair);
  return vector::ExtractOp::create(b, loc, cast, ArrayRef<int64_t>{0});
}

Value mlir::attn::buildMmaSync(OpBuilder &b, Location loc, Value a, Value bFrag,
                               Value acc) {
  Type elt = cast<VectorType>(a.getType()).getElementType();
  if (elt.isF16())
    return nvgpu::MmaSyncOp::create(b, loc, a, bFrag, acc,
                                    ArrayRef<int64_t>{kMmaM, kMmaN, kMmaK});
  SmallVector<Value> regsA, regsB, regsC;
  for (int64_t r = 0; r < 4; ++r)
    regsA.push_back(packedRow(b, loc, a, r));
  for (int64_t r = 0; r < 2; ++r)
    regsB.push_back(packedRow(b, loc, bFrag, r));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 2; ++j)
      regsC.push_back(
          vector::ExtractOp::create(b, loc, acc, ArrayRef<int64_t>{i, j}));
  Type f32 = b.getF32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                     SmallVector<Type>(4, f32));
  auto op = NVVM::MmaOp::create(
      b, loc, resultType, regsA, regsB, regsC,
      ArrayRef<int64_t>{kMmaM, kMmaN, kMmaK}, std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> d;
  for (int64_t i = 0; i < 4; ++i)
    d.push_back(LLVM::ExtractValueOp::create(b, loc, op.getRes(),
                                             ArrayRef<int64_t>{i}));
  return vector::FromElementsOp::create(b, loc, VectorType::get({2, 2}, f32),
                                        d);
}

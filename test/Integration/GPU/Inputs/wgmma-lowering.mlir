// The NVVM op the wgmma kernel emits, as attn-to-cuda lowers it
// (convert-nvvm-to-llvm: inline PTX). See mma-fragment-layout.test.
llvm.func @wgmma(%descA: i64, %descB: i64, %d0: f32, %d1: f32, %d2: f32, %d3: f32, %d4: f32, %d5: f32, %d6: f32, %d7: f32) -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)> {
  %u = llvm.mlir.poison : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
  %s0 = llvm.insertvalue %d0, %u[0] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
  %s1 = llvm.insertvalue %d1, %s0[1] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
  %s2 = llvm.insertvalue %d2, %s1[2] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
  %s3 = llvm.insertvalue %d3, %s2[3] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
  %s4 = llvm.insertvalue %d4, %s3[4] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
  %s5 = llvm.insertvalue %d5, %s4[5] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
  %s6 = llvm.insertvalue %d6, %s5[6] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
  %s7 = llvm.insertvalue %d7, %s6[7] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
  nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
  nvvm.wgmma.fence.aligned
  %r = nvvm.wgmma.mma_async %descA, %descB, %s7, #nvvm.shape<m = 64, n = 16, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 0
  llvm.return %r : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
}

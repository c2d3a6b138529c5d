// RUN: attn-opt %s --split-input-file --attn-verify-model --verify-diagnostics | FileCheck %s
// RUN: not attn-opt %s --split-input-file --attn-verify-model="max-tensor-bytes=0" 2>&1 | FileCheck %s --check-prefix=OPTION

// OPTION: error: attn-verify-model: max-tensor-bytes must be >= 1, got 0

// A model within the limits, whose weights bind each name consistently
// (a gathered and a transposed view of one checkpoint tensor included),
// passes unchanged.
// CHECK-LABEL: func.func @consistent
// CHECK-COUNT-4: attn.weight
func.func @consistent(%x: tensor<2x64xf32>) -> tensor<2x32xf32> {
  %w = attn.weight "proj.weight" : tensor<32x64xf32>
  %wt = attn.weight "proj.weight" {transpose} : tensor<64x32xf32>
  %g = attn.weight "proj.weight" {gather_axis = 0 : i64, gather_extent = 32 : i64, gather_ranges = array<i64: 0, 16>} : tensor<16x64xf32>
  %c = attn.weight "fused" {concat_names = ["proj.weight", "other.weight"], concat_axis = 0 : i64} : tensor<64x64xf32>
  %y = attn.linear %x, %w : (tensor<2x64xf32>, tensor<32x64xf32>) -> tensor<2x32xf32>
  return %y : tensor<2x32xf32>
}

// -----

func.func @two_shapes(%x: tensor<2x64xf32>) -> tensor<2x32xf32> {
  // expected-note @+1 {{the other binding of 'proj.weight'}}
  %w = attn.weight "proj.weight" : tensor<32x64xf32>
  // expected-error @+1 {{'attn.weight' op binds weight 'proj.weight' as a checkpoint tensor of shape [64, 64] but another attn.weight binds it with shape [32, 64]; one name is one tensor of the weights file}}
  %v = attn.weight "proj.weight" : tensor<64x64xf32>
  %y = attn.linear %x, %w : (tensor<2x64xf32>, tensor<32x64xf32>) -> tensor<2x32xf32>
  return %y : tensor<2x32xf32>
}

// -----

// Across functions of one module, and through a gather's extent.
func.func @first() -> tensor<16x64xf32> {
  // expected-note @+1 {{the other binding of 'proj.weight'}}
  %w = attn.weight "proj.weight" : tensor<16x64xf32>
  return %w : tensor<16x64xf32>
}
func.func @second() -> tensor<16x64xf32> {
  // expected-error @+1 {{binds weight 'proj.weight' as a checkpoint tensor of shape [32, 64] but another attn.weight binds it with shape [16, 64]}}
  %g = attn.weight "proj.weight" {gather_axis = 0 : i64, gather_extent = 32 : i64, gather_ranges = array<i64: 0, 16>} : tensor<16x64xf32>
  return %g : tensor<16x64xf32>
}

// -----

func.func @two_dtypes() -> (tensor<8xf32>, tensor<8xf16>) {
  // expected-note @+1 {{the other binding of 'ln.bias'}}
  %a = attn.weight "ln.bias" : tensor<8xf32>
  // expected-error @+1 {{'attn.weight' op binds weight 'ln.bias' as 'f16' but another attn.weight binds it as 'f32'; one name is one tensor of the weights file}}
  %b = attn.weight "ln.bias" : tensor<8xf16>
  return %a, %b : tensor<8xf32>, tensor<8xf16>
}

// -----

func.func @concat_part_dtype() -> (tensor<8x8xf32>, tensor<16x8xf16>) {
  // expected-note @+1 {{the other binding of 'q.weight'}}
  %a = attn.weight "q.weight" : tensor<8x8xf32>
  // expected-error @+1 {{binds weight 'q.weight' as 'f16' but another attn.weight binds it as 'f32'}}
  %b = attn.weight "qk" {concat_names = ["q.weight", "k.weight"], concat_axis = 0 : i64} : tensor<16x8xf16>
  return %a, %b : tensor<8x8xf32>, tensor<16x8xf16>
}

// -----

// Sizes: 2^40 x 2^8 f32 is 2^50 bytes, more than 2^47.
func.func @too_large() -> tensor<1099511627776x256xf32> {
  // expected-error @+1 {{result #0 has type 'tensor<1099511627776x256xf32>' of 1125899906842624 bytes, more than the target can address (140737488355328 bytes)}}
  %w = attn.weight "huge" : tensor<1099511627776x256xf32>
  return %w : tensor<1099511627776x256xf32>
}

// -----

// INT64_MAX elements of 4 bytes overflow 64 bits.
// expected-error @+1 {{block argument #0 has type 'tensor<9223372036854775807xf32>', whose size in bytes overflows 64 bits; no target can hold it}}
func.func @overflow(%x: tensor<9223372036854775807xf32>) {
  return
}

// -----

// A dynamic batch does not hide the static part's size.
func.func @dynamic_batch(%x: tensor<?x1099511627776x1024xf32>) -> tensor<?x1099511627776x1024xf32> {
  // expected-error @+1 {{result #0 has type 'tensor<?x1099511627776x1024xf32>' of 4503599627370496 bytes, more than the target can address}}
  %y = attn.relu %x : tensor<?x1099511627776x1024xf32>
  return %y : tensor<?x1099511627776x1024xf32>
}

// RUN: attn-opt %s --split-input-file --verify-diagnostics -allow-unregistered-dialect | FileCheck %s

// #attn.tile round-trips with any subset of its fields, in canonical order,
// and is accepted on ops of any dialect (attn-lower-to-linalg puts it on
// linalg.generic, attn-tile on func.func).

// CHECK-LABEL: func.func @roundtrip
// CHECK-SAME:    attn.tile = #attn.tile<threads = 64>
// CHECK:         attn.linear {{.*}} {attn.tile = #attn.tile<vector_width = 16, row_tile = 4, col_tile = 4, column_block = 128>}
// CHECK:         attn.sdpa {{.*}} {attn.tile = #attn.tile<block_q = 1, block_k = 64>}
// CHECK:         "test.op"() {attn.tile = #attn.tile<>}
func.func @roundtrip(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>, %q: tensor<1x1x4x8xf32>) -> tensor<8x32xf32> attributes {attn.tile = #attn.tile<threads = 64>} {
  %y = attn.linear %x, %w {attn.tile = #attn.tile<column_block = 128, row_tile = 4, col_tile = 4, vector_width = 16>} : (tensor<8x64xf32>, tensor<32x64xf32>) -> tensor<8x32xf32>
  %o = attn.sdpa %q, %q, %q {attn.tile = #attn.tile<block_q = 1, block_k = 64>} : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  "test.op"() {attn.tile = #attn.tile<>} : () -> ()
  return %y : tensor<8x32xf32>
}

// -----

func.func @zero_block(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{#attn.tile: block_q must be >= 1, got 0}}
  %o = attn.sdpa %q, %q, %q {attn.tile = #attn.tile<block_q = 0>} : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

func.func @negative_column_block(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{#attn.tile: column_block must be >= 1, got -64}}
  %y = attn.linear %x, %w {attn.tile = #attn.tile<column_block = -64>} : (tensor<8x64xf32>, tensor<32x64xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

func.func @vector_width_not_power_of_two(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{#attn.tile: vector_width must be a power of two, got 12}}
  %y = attn.linear %x, %w {attn.tile = #attn.tile<vector_width = 12>} : (tensor<8x64xf32>, tensor<32x64xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

// expected-error @+1 {{#attn.tile: threads must be at most 1024, got 2048}}
func.func @too_many_threads() attributes {attn.tile = #attn.tile<threads = 2048>} {
  return
}

// -----

// Sizes beyond what a kernel can unroll or stage (TileAttr::maxValue).
func.func @huge_block(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{#attn.tile: block_k must be at most 4096, got 1099511627776}}
  %o = attn.sdpa %q, %q, %q {attn.tile = #attn.tile<block_k = 1099511627776>} : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

func.func @huge_register_tile(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{#attn.tile: row_tile must be at most 64, got 9223372036854775807}}
  %y = attn.linear %x, %w {attn.tile = #attn.tile<row_tile = 9223372036854775807>} : (tensor<8x64xf32>, tensor<32x64xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

func.func @huge_vector_width(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{#attn.tile: vector_width must be at most 64, got 128}}
  %y = attn.linear %x, %w {attn.tile = #attn.tile<vector_width = 128>} : (tensor<8x64xf32>, tensor<32x64xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

func.func @huge_column_block(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{#attn.tile: column_block must be at most 65536, got 65537}}
  %y = attn.linear %x, %w {attn.tile = #attn.tile<column_block = 65537>} : (tensor<8x64xf32>, tensor<32x64xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

// expected-error @+1 {{#attn.tile: warp_n_tiles must be at most 16, got 17}}
func.func @huge_warp_tile() attributes {attn.tile = #attn.tile<warp_n_tiles = 17>} {
  return
}

// -----

// expected-error @+1 {{'attn.tile' must be a #attn.tile attribute, got {block_q = 64 : i64}}}
func.func @dictionary() attributes {attn.tile = {block_q = 64}} {
  return
}

// -----

func.func @unknown_field() {
  // expected-error @+1 {{duplicate or unknown struct parameter name: block_m}}
  "test.op"() {attn.tile = #attn.tile<block_m = 64>} : () -> ()
  return
}

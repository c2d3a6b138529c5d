// Not a test: input for mma-fragment-layout.test. One nvgpu.mma.sync whose
// operand rows are distinct function arguments, so the order in which
// convert-nvgpu-to-nvvm passes them to nvvm.mma.sync is visible.
func.func @mma(%a0: vector<2xf16>, %a1: vector<2xf16>, %a2: vector<2xf16>, %a3: vector<2xf16>,
               %b0: vector<2xf16>, %b1: vector<2xf16>,
               %c0: vector<2xf32>, %c1: vector<2xf32>) -> (vector<2xf32>, vector<2xf32>) {
  %za = arith.constant dense<0.0> : vector<4x2xf16>
  %zb = arith.constant dense<0.0> : vector<2x2xf16>
  %zc = arith.constant dense<0.0> : vector<2x2xf32>
  %a_0 = vector.insert %a0, %za [0] : vector<2xf16> into vector<4x2xf16>
  %a_1 = vector.insert %a1, %a_0 [1] : vector<2xf16> into vector<4x2xf16>
  %a_2 = vector.insert %a2, %a_1 [2] : vector<2xf16> into vector<4x2xf16>
  %a = vector.insert %a3, %a_2 [3] : vector<2xf16> into vector<4x2xf16>
  %b_0 = vector.insert %b0, %zb [0] : vector<2xf16> into vector<2x2xf16>
  %b = vector.insert %b1, %b_0 [1] : vector<2xf16> into vector<2x2xf16>
  %c_0 = vector.insert %c0, %zc [0] : vector<2xf32> into vector<2x2xf32>
  %c = vector.insert %c1, %c_0 [1] : vector<2xf32> into vector<2x2xf32>
  %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
  %d0 = vector.extract %d[0] : vector<2xf32> from vector<2x2xf32>
  %d1 = vector.extract %d[1] : vector<2xf32> from vector<2x2xf32>
  return %d0, %d1 : vector<2xf32>, vector<2xf32>
}

"""The GPU emulator core shared by the kernel emulator
(gpu_kernel_emulator.py: one gpu.launch of a pass's output, block by block)
and the whole-model emulator (gpu_model_emulator.py: a compiled model's
host code and every kernel it launches, many blocks at once).

- ir: the parser of MLIR's generic op form and the type helpers.
- numerics: bf16 rounding, and the PTX ISA models of the mma.sync m16n8k16
  and wgmma m64nNk16 fragment layouts, wgmma matrix descriptors and
  ldmatrix.
- host: the whole-model emulator's memory (buffers, strided views), the
  parsed module and its manifest, and the binding of safetensors weights.
- memory: the whole-model emulator's memref views, loads and stores.
- tma: tensor maps, TMA box loads and mbarriers (PTX ISA / driver API).
- core: shared-memory race bookkeeping and the device ops whose rules are
  the same in both emulators (cp.async groups, TMA loads and mbarriers,
  ldmatrix, mma.sync, wgmma with its fences and commit groups).
- driver: what the emulation scripts share (running a pass on a case,
  running the cases).

THIS IS NOT A SUBSTITUTE FOR RUNNING ON A GPU (see gpu_kernel_emulator.py).
"""

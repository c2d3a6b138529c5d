#!/bin/sh
# Prints a digest of `attn-compile --emit=llvm` for the examples, the ONNX
# test models and exports, and the Hugging Face test checkpoints, at both
# targets. A refactoring that must not change what is generated is checked by
# comparing the output of this script before and after it:
#   scripts/emit_llvm_digests.sh build > before.txt
#   ... change, rebuild ...
#   scripts/emit_llvm_digests.sh build | diff before.txt -
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
COMPILE="$BUILD/bin/attn-compile"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# emit NAME ARGS...: one line, the digest or the first error.
emit() {
  name=$1
  shift
  if try "$@"; then
    # gpu-module-to-binary records how long ptxas took in the binary's
    # properties: the only part that changes from one run to the next.
    digest=$(sed -E 's/properties = \{ISAToBinaryTimeInMs = [0-9]+ : i64, LLVMIRToISATimeInMs = [0-9]+ : i64\}, //' \
      "$TMP/out.mlir" | sha256sum | cut -c1-16)
    echo "$digest $name"
  else
    echo "failed           $name: $(grep -m1 error "$TMP/log" | sed "s|^$ROOT/||")"
  fi
  rm -f "$TMP"/out*
}
try() {
  "$COMPILE" "$@" --emit=llvm -o "$TMP/out.mlir" >"$TMP/log" 2>&1
}

for target in cpu cuda; do
  chip=
  [ "$target" = cuda ] && chip=--chip=sm_90a
  for f in "$ROOT"/examples/*.mlir; do
    emit "$target $(basename "$f")" "$f" --target=$target $chip
  done
  for f in "$ROOT"/test/ONNX/Models/*-op17.onnx "$ROOT"/test/ONNX/Exports/*.onnx; do
    case $f in
    *-past.onnx) emit "$target $(basename "$f")" "$f" --target=$target $chip \
      --input-shape 'input_ids=2x?' --kv-cache 40 ;;
    *) emit "$target $(basename "$f")" "$f" --target=$target $chip ;;
    esac
  done
  for d in "$ROOT"/test/Frontend/HF/Inputs/*/; do
    n=$(basename "$d")
    set -- "$d" --target=$target $chip --input-shape=input_ids=2x8
    # Decoders take input_ids alone; vision encoders pixel_values;
    # encoder-decoders decoder_input_ids; encoders a mask and token types
    # too.
    if try "$@"; then
      emit "$target $n" "$@"
      # Decoders also as a KV-cache step (encoders such as CLIP's text
      # tower have none).
      set -- "$d" --target=$target $chip --kv-cache 40 \
        --input-shape 'input_ids=2x?'
      if try "$@"; then
        emit "$target $n kv-cache" "$@"
      fi
    elif try "$d" --target=$target $chip \
      --input-shape=pixel_values=2x3x16x16; then
      emit "$target $n" "$d" --target=$target $chip \
        --input-shape=pixel_values=2x3x16x16
    elif try "$@" --input-shape=decoder_input_ids=2x5; then
      emit "$target $n" "$@" --input-shape=decoder_input_ids=2x5
    elif try "$@" --input-shape=attention_mask=2x8; then
      emit "$target $n" "$@" --input-shape=attention_mask=2x8
    else
      emit "$target $n" "$@" --input-shape=attention_mask=2x8 \
        --input-shape=token_type_ids=2x8
    fi
  done
done

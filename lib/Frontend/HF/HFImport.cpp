//===- HFImport.cpp - Hugging Face checkpoint import ----------------------===//

#include "attnc/Frontend/HF/HFImport.h"
#include "Checkpoint.h"
#include "ModelBuilder.h"

#include "attnc/Dialect/Attn/AttnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::hf;

bool mlir::attn::hf::parseInputShape(StringRef spec, ImportOptions &options,
                                     std::string &error) {
  auto [name, dims] = spec.split('=');
  if (name.empty() || dims.empty() || !spec.contains('=')) {
    error = "--input-shape '" + spec.str() +
            "' must have the form NAME=D0xD1x... (e.g. input_ids=1x128)";
    return false;
  }
  SmallVector<int64_t> shape;
  SmallVector<StringRef> parts;
  dims.split(parts, 'x');
  for (StringRef part : parts) {
    // `?`: chosen at run time; the builders say where they allow it.
    if (part == "?") {
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    int64_t dim;
    // Same bound as config values: shapes stay far from int64 overflow.
    if (part.getAsInteger(10, dim) || dim <= 0 || dim > (int64_t(1) << 24)) {
      error = "--input-shape '" + spec.str() + "': dimension '" + part.str() +
              "' must be an integer in [1, 16777216] or ?";
      return false;
    }
    shape.push_back(dim);
  }
  if (!options.inputShapes.try_emplace(name, std::move(shape)).second) {
    error = "--input-shape gives input '" + name.str() + "' twice";
    return false;
  }
  return true;
}

OwningOpRef<ModuleOp>
mlir::attn::hf::importCheckpoint(StringRef dir, const ImportOptions &options,
                                 MLIRContext *context) {
  context->loadDialect<AttnDialect, arith::ArithDialect, func::FuncDialect,
                       linalg::LinalgDialect, math::MathDialect,
                       tensor::TensorDialect>();
  std::unique_ptr<Checkpoint> ckpt = Checkpoint::open(dir, context);
  if (!ckpt)
    return nullptr;

  FailureOr<std::string> archName = ckpt->getArchitecture();
  if (failed(archName))
    return nullptr;

  OwningOpRef<ModuleOp> module =
      ModuleOp::create(FileLineColLoc::get(context, dir, 0, 0));
  ModelBuilder mb(*ckpt, options, *module);
  // The model classes and their builders; decoders and encoder-decoders
  // can drive generation.
  enum Kind { Encoder, Decoder, EncoderDecoder };
  struct Architecture {
    StringRef name;
    function_ref<LogicalResult(ModelBuilder &)> build;
    Kind kind;
  };
  auto llamaLike = [](LlamaFamily f) {
    return [f](ModelBuilder &m) { return buildLlamaLike(m, f); };
  };
  auto bertLike = [](BertFamily f) {
    return [f](ModelBuilder &m) { return buildBertLike(m, f); };
  };
  auto mistral = llamaLike(LlamaFamily::Mistral),
       qwen2 = llamaLike(LlamaFamily::Qwen2),
       qwen3 = llamaLike(LlamaFamily::Qwen3),
       gemma = llamaLike(LlamaFamily::Gemma),
       phi3 = llamaLike(LlamaFamily::Phi3),
       gemma2 = llamaLike(LlamaFamily::Gemma2);
  auto roberta = bertLike(BertFamily::Roberta),
       electra = bertLike(BertFamily::Electra),
       albert = bertLike(BertFamily::Albert),
       distilBert = bertLike(BertFamily::DistilBert),
       mpnet = bertLike(BertFamily::MPNet);
  auto t5 = [](ModelBuilder &m) { return buildT5(m, /*mt5=*/false); };
  auto mt5 = [](ModelBuilder &m) { return buildT5(m, /*mt5=*/true); };
  auto bart = [](ModelBuilder &m) { return buildBart(m, /*preNorm=*/false); };
  auto mbart = [](ModelBuilder &m) { return buildBart(m, /*preNorm=*/true); };
  auto vit = [](ModelBuilder &m) { return buildViT(m, /*classifier=*/false); };
  auto vitClassifier = [](ModelBuilder &m) {
    return buildViT(m, /*classifier=*/true);
  };
  const Architecture architectures[] = {
      {"BertModel", buildBert, Encoder},
      {"RobertaModel", roberta, Encoder},
      {"DistilBertModel", distilBert, Encoder},
      {"ElectraModel", electra, Encoder},
      {"AlbertModel", albert, Encoder},
      {"MPNetModel", mpnet, Encoder},
      {"GPT2LMHeadModel", buildGpt2, Decoder},
      {"LlamaForCausalLM", buildLlama, Decoder},
      {"MistralForCausalLM", mistral, Decoder},
      {"Qwen2ForCausalLM", qwen2, Decoder},
      {"Qwen3ForCausalLM", qwen3, Decoder},
      {"GemmaForCausalLM", gemma, Decoder},
      {"Gemma2ForCausalLM", gemma2, Decoder},
      {"OPTForCausalLM", buildOpt, Decoder},
      {"GPTNeoXForCausalLM", buildGptNeoX, Decoder},
      {"PhiForCausalLM", buildPhi, Decoder},
      {"Phi3ForCausalLM", phi3, Decoder},
      {"BloomForCausalLM", buildBloom, Decoder},
      {"FalconForCausalLM", buildFalcon, Decoder},
      // Encoder-decoders: one full-sequence model (generation re-runs the
      // decoder stream over its window), or with --kv-cache the encoder and
      // a decoder step over KV caches.
      {"T5ForConditionalGeneration", t5, EncoderDecoder},
      {"MT5ForConditionalGeneration", mt5, EncoderDecoder},
      {"BartForConditionalGeneration", bart, EncoderDecoder},
      {"MBartForConditionalGeneration", mbart, EncoderDecoder},
      {"ViTModel", vit, Encoder},
      {"ViTForImageClassification", vitClassifier, Encoder},
      {"CLIPVisionModel", buildClipVision, Encoder},
      {"CLIPTextModel", buildClipText, Encoder},
  };
  const Architecture *arch =
      llvm::find_if(architectures,
                    [&](const Architecture &a) { return a.name == *archName; });
  // Families users bring that no builder covers yet: name what is missing
  // rather than only listing what is supported.
  struct Unbuilt {
    StringRef prefix;
    StringRef missing;
  };
  static const Unbuilt unbuilt[] = {
      {"Marian", "an encoder-decoder whose sinusoidal positions (sines in "
                 "the first half of the channels, cosines in the second) are "
                 "not built yet"},
      {"Whisper", "an audio encoder-decoder: its convolutional audio input is "
                  "not built yet"},
      {"ViT", "a ViT variant that is not built yet (ViTModel and "
              "ViTForImageClassification are)"},
      {"DeiT", "a vision transformer with a distillation token, which is "
               "not built yet (ViTModel and ViTForImageClassification are)"},
      {"CLIP", "a CLIP class that is not built yet (its towers, "
               "CLIPVisionModel and CLIPTextModel, are; the dual-encoder "
               "CLIPModel and the projection heads are not)"},
  };
  if (arch == std::end(architectures)) {
    for (const Unbuilt &u : unbuilt) {
      StringRef rest = *archName;
      // The family name ends where the class name's next word starts.
      if (!rest.consume_front(u.prefix) || rest.empty() ||
          !llvm::isUpper(rest.front()))
        continue;
      emitError(ckpt->keyLoc("architectures"))
          << "architecture \"" << *archName << "\" is " << u.missing;
      return nullptr;
    }
    std::string names;
    for (const Architecture &a : architectures)
      names += (names.empty() ? "" : ", ") + a.name.str();
    emitError(ckpt->keyLoc("architectures"))
        << "unsupported architecture \"" << *archName
        << "\"; supported: " << names;
    return nullptr;
  }
  if (arch->kind == Encoder && options.kvCache > 0) {
    std::string generators;
    for (const Architecture &a : architectures)
      if (a.kind != Encoder)
        generators += (generators.empty() ? "" : ", ") + a.name.str();
    emitError(ckpt->keyLoc("architectures"))
        << "--kv-cache builds a decode step for decoders and "
           "encoder-decoders ("
        << generators << "), not for \"" << *archName << "\"";
    return nullptr;
  }
  if (failed(arch->build(mb)))
    return nullptr;
  // The *LMHeadModel / *ForCausalLM classes are decoders: their logits can
  // drive generation (the verifier checks every attention is causal). So
  // can an encoder-decoder's, causal in the decoder stream (the verifier
  // lets attention read the encoder unmasked, nothing else).
  if (arch->kind != Encoder)
    AttnDialect::CausalLmAttrHelper(context).setAttr(*module,
                                                     UnitAttr::get(context));
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

//===- AttnAttrs.td - attn dialect attributes --------------*- tablegen -*-===//

#ifndef ATTNC_DIALECT_ATTN_ATTNATTRS_TD
#define ATTNC_DIALECT_ATTN_ATTNATTRS_TD

include "attnc/Dialect/Attn/AttnBase.td"

class Attn_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Attn_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Attn_TileAttr : Attn_Attr<"Tile", "tile"> {
  let summary = "tile sizes chosen for one op by attn-tile";
  let description = [{
    The tile configuration of one op, attached by `attn-tile` as the
    discardable attribute `attn.tile` and read by the passes that tile:

    | field | read by | meaning |
    | --- | --- | --- |
    | `block_q`, `block_k` | attn-flash-attention | query rows / key columns per block |
    | `vector_width` | attn-cpu-matmul-kernel | f32 lanes per accumulator |
    | `row_tile`, `col_tile` | attn-cpu-matmul-kernel | MR x NR register tile |
    | `column_block` | attn-cpu-matmul-kernel | weight rows per parallel block |
    | `warp_n_tiles` | attn-gpu-mma-matmul | n8 subtiles per warp |
    | `threads` | attn-gpu-tile-parallel-loops | threads per block (on func.func) |

    Every field is optional: an absent field leaves the consumer's own
    default (its pass option); a present one takes precedence over it.
    Present fields are positive and at most their limit (`maxValue`):
    `block_q`, `block_k` 4096, `vector_width` 64 (a power of two),
    `row_tile`, `col_tile` 64 (register tiles are unrolled), `column_block`
    65536, `warp_n_tiles` 16, `threads` 1024 (CUDA's limit per block). attn-flash-attention
    and attn-lower-to-linalg copy the attribute of `attn.mha`,
    `attn.linear` and `attn.ffn` onto the ops they create (the projections,
    the `attn.sdpa`, the contraction `linalg.generic`s), so the consumers
    find it after lowering and bufferization.

    ```mlir
    %y = attn.linear %x, %w {attn.tile = #attn.tile<vector_width = 16,
        row_tile = 4, col_tile = 4, column_block = 128>} : ...
    ```
  }];
  let parameters = (ins
    OptionalParameter<"std::optional<int64_t>">:$block_q,
    OptionalParameter<"std::optional<int64_t>">:$block_k,
    OptionalParameter<"std::optional<int64_t>">:$vector_width,
    OptionalParameter<"std::optional<int64_t>">:$row_tile,
    OptionalParameter<"std::optional<int64_t>">:$col_tile,
    OptionalParameter<"std::optional<int64_t>">:$column_block,
    OptionalParameter<"std::optional<int64_t>">:$warp_n_tiles,
    OptionalParameter<"std::optional<int64_t>">:$threads
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The name of the discardable attribute that holds it.
    static constexpr ::llvm::StringLiteral kAttrName = "attn.tile";
    /// The tile configuration attached to `op`, or null.
    static TileAttr lookup(::mlir::Operation *op) {
      return op->getAttrOfType<TileAttr>(kAttrName);
    }
    /// The largest value a field (named as in the attribute, e.g.
    /// "block_q") may take: beyond it a kernel would be unrolled or sized
    /// absurdly. attn-tile bounds its options by the same limits.
    static int64_t maxValue(::llvm::StringRef field);
  }];
}

#endif // ATTNC_DIALECT_ATTN_ATTNATTRS_TD

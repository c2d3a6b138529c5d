//===- BytecodeNesting.cpp - bounded nesting for MLIR bytecode ------------===//

#include "attnc/Support/BytecodeNesting.h"

#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/Twine.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlir;

namespace {
/// An attribute or a type (their storage pointers never coincide).
struct SubElement {
  const void *ptr;
  bool isType;
};

/// Heights of attributes and types (1 for a leaf), memoized: they are
/// uniqued, so a DAG is measured in time linear in its size. Iterative, so
/// that measuring a deep one cannot overflow the stack.
class ElementHeights {
public:
  explicit ElementHeights(unsigned limit) : limit(limit) {}

  /// The height of `root`, or limit + 1 once it exceeds the limit.
  unsigned of(SubElement root) {
    if (auto it = heights.find(root.ptr); it != heights.end())
      return it->second;
    struct Entry {
      SubElement element;
      unsigned depth;
      bool expanded;
    };
    SmallVector<Entry> stack = {{root, 1, false}};
    // Elements being measured: a recursive (mutable) type that refers back
    // to itself ends there instead of looping.
    llvm::DenseSet<const void *> inProgress;
    while (!stack.empty()) {
      Entry entry = stack.back();
      if (heights.count(entry.element.ptr)) {
        stack.pop_back();
        continue;
      }
      SmallVector<SubElement> children = childrenOf(entry.element);
      if (!entry.expanded) {
        if (entry.depth > limit)
          return limit + 1;
        stack.back().expanded = true;
        inProgress.insert(entry.element.ptr);
        for (SubElement child : children)
          if (!heights.count(child.ptr) && !inProgress.count(child.ptr))
            stack.push_back({child, entry.depth + 1, false});
        continue;
      }
      unsigned height = 1;
      for (SubElement child : children)
        height = std::max(height, heights.lookup(child.ptr) + 1);
      heights[entry.element.ptr] = height;
      inProgress.erase(entry.element.ptr);
      stack.pop_back();
      if (height > limit)
        return limit + 1;
    }
    return heights.lookup(root.ptr);
  }
  unsigned of(Attribute attr) {
    return attr ? of({attr.getAsOpaquePointer(), false}) : 0;
  }
  unsigned of(Type type) {
    return type ? of({type.getAsOpaquePointer(), true}) : 0;
  }

private:
  static SmallVector<SubElement> childrenOf(SubElement element) {
    SmallVector<SubElement> children;
    auto onAttr = [&](Attribute a) {
      children.push_back({a.getAsOpaquePointer(), false});
    };
    auto onType = [&](Type t) {
      children.push_back({t.getAsOpaquePointer(), true});
    };
    if (element.isType)
      Type::getFromOpaquePointer(element.ptr)
          .walkImmediateSubElements(onAttr, onType);
    else
      Attribute::getFromOpaquePointer(element.ptr)
          .walkImmediateSubElements(onAttr, onType);
    return children;
  }

  unsigned limit;
  llvm::DenseMap<const void *, unsigned> heights;
};

enum ChildStatus {
  kWithinLimit = 0,
  kRegionsTooDeep = 3,
  kElementsTooDeep = 4
};

/// The nesting of what `block` holds, without recursion.
ChildStatus measure(Block &block, unsigned maxDepth) {
  ElementHeights heights(maxDepth);
  SmallVector<std::pair<Operation *, unsigned>> work;
  for (Operation &op : block)
    work.push_back({&op, 1});
  while (!work.empty()) {
    auto [op, depth] = work.pop_back_val();
    if (depth > maxDepth)
      return kRegionsTooDeep;
    unsigned height = std::max({heights.of(op->getDiscardableAttrDictionary()),
                                heights.of(op->getPropertiesAsAttribute()),
                                heights.of(Attribute(op->getLoc()))});
    for (Type type : op->getResultTypes())
      height = std::max(height, heights.of(type));
    if (height > maxDepth)
      return kElementsTooDeep;
    for (Region &region : op->getRegions())
      for (Block &nested : region) {
        for (BlockArgument arg : nested.getArguments())
          if (heights.of(arg.getType()) > maxDepth)
            return kElementsTooDeep;
        for (Operation &child : nested)
          work.push_back({&child, depth + 1});
      }
  }
  return kWithinLimit;
}
} // namespace

llvm::Error attnc::checkBytecodeNesting(llvm::MemoryBufferRef buffer,
                                        const DialectRegistry &registry,
                                        bool allowUnregisteredDialects,
                                        unsigned maxDepth) {
  if (!isBytecode(buffer))
    return llvm::Error::success();
  pid_t pid = fork();
  if (pid < 0)
    return llvm::createStringError(
        "%s: cannot check the nesting of MLIR bytecode (fork failed)",
        buffer.getBufferIdentifier().str().c_str());
  if (pid == 0) {
    // The child only answers with its exit status: a crash report or a
    // parse error here would be noise (the real parse reports errors).
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, STDOUT_FILENO);
      dup2(null, STDERR_FILENO);
    }
    MLIRContext context(registry, MLIRContext::Threading::DISABLED);
    context.allowUnregisteredDialects(allowUnregisteredDialects);
    ParserConfig config(&context, /*verifyAfterParse=*/false);
    Block block;
    ChildStatus status = kWithinLimit;
    if (succeeded(readBytecodeFile(buffer, &block, config)))
      status = measure(block, maxDepth);
    // Without destructors or atexit handlers: nothing of the parent's state
    // is ours to tear down.
    _exit(status);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return llvm::createStringError(
          "%s: cannot check the nesting of MLIR bytecode (waitpid failed)",
          buffer.getBufferIdentifier().str().c_str());
  std::string file = buffer.getBufferIdentifier().str();
  if (WIFSIGNALED(status))
    return llvm::createStringError(
        "%s: MLIR bytecode that the reader cannot parse safely (it crashed on "
        "it, e.g. on nesting too deep); attnc does not read it",
        file.c_str());
  switch (WEXITSTATUS(status)) {
  case kWithinLimit:
    return llvm::Error::success();
  case kRegionsTooDeep:
    return llvm::createStringError(
        "%s: MLIR bytecode nests regions deeper than %u levels; attnc does "
        "not read IR nested this deeply",
        file.c_str(), maxDepth);
  case kElementsTooDeep:
    return llvm::createStringError(
        "%s: MLIR bytecode nests attributes or types deeper than %u levels; "
        "attnc does not read IR nested this deeply",
        file.c_str(), maxDepth);
  default:
    return llvm::createStringError(
        "%s: cannot check the nesting of MLIR bytecode (the checking process "
        "exited with status %d)",
        file.c_str(), WEXITSTATUS(status));
  }
}

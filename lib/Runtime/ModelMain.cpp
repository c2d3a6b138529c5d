//===- ModelMain.cpp - main() for compiled-model executables --------------===//
//
// Linked (as the attnrt_main library) into executables built from a compiled
// model, never into shared libraries.
//
//===----------------------------------------------------------------------===//

#include "attnc/Runtime/attnrt.h"

int main(int argc, char **argv) { return attnrt_main(argc, argv); }

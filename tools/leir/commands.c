#include "commands.h"

const tool_command tool_commands[] = {
    {"fmt", "fmt [--pretty|--yaml] [--lines] [--strict] [--json] IN",
     "Prints the canonical text of a program (no whitespace, byte-identical to\n"
     "reference output).\n"
     "\n"
     "  --pretty   one top-level nest per line, nested nests indented\n"
     "  --yaml     a program file (*.leir.yaml) with the signature; a bare\n"
     "             program gets an inferred one\n"
     "  --lines    every input line is a separate program (batch mode)\n"
     "  --strict   reject whitespace (canonical text only)\n"
     "  --json     one JSON object per program: {\"line\":N,\"leir\":\"...\"}\n"
     "  --input NAME:DTYPE:SHAPE, --output NAME:DTYPE:SHAPE\n"
     "             declare the signature (e.g. --input A:f64:2x8)\n"
     "\n"
     "IN is a .leir file (whitespace allowed), a .leir.yaml program file, or -\n"
     "for standard input.\n"
     "\n"
     "Example:\n"
     "  echo 'B^{2}_{tx=0} L^{8}_{a=0} [C^{f64,g}_{tx,a}=max(A^{f64,g}_{tx,a},0);];' | leir fmt -\n",
     cmd_fmt},
    {"check", "check [--lines] [--strict] [--json] [--input ...] [--output ...] IN",
     "Runs the static checks of the LEIR spec (section 3.6): every tensor known\n"
     "or written before it is read, consistent dtypes, every access provably in\n"
     "bounds (if_then_else guards narrow the ranges), output shapes equal to\n"
     "the signature, and limits on extents, iterations, depth and sizes.\n"
     "Without a signature one is inferred. Diagnostics go to standard error as\n"
     "FILE:LINE:COL: error: MESSAGE [rule]; the exit status is 1 when any\n"
     "program is invalid.\n"
     "\n"
     "  --lines, --strict, --json, --input, --output: as for leir fmt\n"
     "  --json prints {\"line\":N,\"valid\":BOOL,\"diagnostics\":[...]} per program\n",
     cmd_check},
    {"hash", "hash [--alpha] [--lines] [--strict] [--json] IN",
     "Prints the XXH3-64 hash of the canonical text as 16 hex digits.\n"
     "\n"
     "  --alpha    hash after renaming loop variables (per nest) and\n"
     "             intermediates (per program) by first appearance, so programs\n"
     "             that differ only in fresh names hash equal\n"
     "  --lines, --strict, --json: as for leir fmt\n",
     cmd_hash},
    {"lower", "lower --to cuda [--report] [--ptx] [--arch A] [--fmad] [--input ...] IN",
     "Prints the lowered source of a program for a backend.\n"
     "\n"
     "  --to cuda   CUDA C: one kernel per top-level nest; B loops become the\n"
     "              launch grid (t* = threadIdx, b* = blockIdx; see docs/cuda.md).\n"
     "              A bound loop that carries a dependence is rejected (exit 1).\n"
     "  --report    the lowering report (launch geometry, loops run in the\n"
     "              thread, implicit initializations, memory placement) on stderr\n"
     "  --ptx       compile with NVRTC and print the PTX instead\n"
     "  --arch A    NVRTC architecture (default: the GPU's, else $LEIR_CUDA_ARCH,\n"
     "              else compute_90)\n"
     "  --fmad      allow fused multiply-add contraction\n"
     "  --input, --output: declare the signature, as for leir fmt\n"
     "\n"
     "Example:\n"
     "  echo 'B^{4}_{tx=0}L^{8}_{a=0}[C^{f32,g}_{tx}=C^{f32,g}_{tx}+A^{f32,g}_{tx,a};];' |\n"
     "    leir lower --to cuda --report -\n",
     cmd_lower},
};

const size_t tool_command_count = sizeof tool_commands / sizeof tool_commands[0];

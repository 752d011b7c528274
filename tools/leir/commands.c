#include "commands.h"
#include "run_opts.h"

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
    {"strategies", "strategies [--json]",
     "Lists the 44 strategies of the catalogue: index, name, level\n"
     "(graph, operator, memory, math), whether this build implements it, and\n"
     "what it does. --json adds the CoT definition and benefit sentences.\n",
     cmd_strategies},
    {"candidates", "candidates [--strategy S] [--json] [--no-result] [--lines] IN",
     "Lists every applicable step of the implemented strategies (or of\n"
     "strategy S) on the program: one line per candidate,\n"
     "STEP<TAB>CLASS<TAB>RESULT, where CLASS is exact or reassociating and\n"
     "RESULT the transformed program. The order is deterministic.\n"
     "\n"
     "  --strategy S       only strategy S (a catalogue name)\n"
     "  --no-result        omit the transformed programs\n"
     "  --vector-width N   widest loop loop_vectorization may mark V (default 8)\n"
     "  --all-divisors     loop_split/loop_tiling: every divisor, not only <= sqrt(n)\n"
     "  --generic-values   splits: also those whose condition is assumed (values finite,\n"
     "                     non-zero where divided), not proven\n"     "  --json             {\"step\":...,\"json\":{...},\"class\":...,\"result\":...}\n"
     "  --lines, --strict, --input, --output: as for leir fmt\n"
     "\n"
     "Example:\n"
     "  echo 'B^{4}_{tx=0}L^{6}_{a=0}[C^{f64,g}_{tx,a}=A^{f64,g}_{tx,a}*2;];' |\n"
     "    leir candidates --strategy loop_split -\n",
     cmd_candidates},
    {"apply", "apply STEP IN [--cot] [--json] [--pretty]",
     "Applies one step, given as text ('loop_split nest=0 loop=a factor=2')\n"
     "or JSON ('{\"strategy\":\"loop_split\",\"nest\":0,...}'), and prints the\n"
     "new program. The step must be a candidate of the program; otherwise the\n"
     "failed precondition is reported and the exit status is 1.\n"
     "\n"
     "  --cot      also print the chain of thought (second line)\n"
     "  --json     {\"step\":...,\"class\":...,\"result\":...,\"cot\":...}\n"
     "  --pretty   one nest per line\n"
     "  --lines, --strict, --input, --output: as for leir fmt\n",
     cmd_apply},
    {"explain", "explain S IN [--json]",
     "Explains why strategy S applies to the program (its candidates) or not\n"
     "(the failed precondition at every site, with its rule). Exit status 0\n"
     "when it applies, 1 when it does not.\n",
     cmd_explain},
    {"ground", "ground BEFORE AFTER [--strategy S] [--json]",
     "Finds every step that turns BEFORE into AFTER, comparing programs up to\n"
     "fresh names (leir hash --alpha). Prints STEP<TAB>CLASS per match; exit\n"
     "status 1 when there is none.\n"
     "\n"
     "  --strategy S   only search strategy S\n"
     "  --input, --output: the signature of both programs\n",
     cmd_ground},
    {"lower", "lower --to c|cuda|tir [--check-bounds] [--threads N] [--report] [--ptx] [--bind B] [--blocks] [--global-scope] IN",
     "Prints the source a backend generates for a program: --to c gives the C\n"
     "function the cpu backend compiles (OpenMP pragmas appear only on P/B/V loops\n"
     "whose iterations are independent, and only with --threads > 1 or several\n"
     "CPUs). cuda needs a build with the CUDA backend; tir gives TVMScript\n"
     "(@T.prim_func) that TVM parses and builds (docs/tir.md).\n"
     "No compiler is needed. Exit status 3 when the target is not available.\n"
     "--to cuda gives one kernel per top-level nest, B loops as the launch grid\n"
     "(docs/cuda.md); a bound loop that carries a dependence is rejected (exit 1).\n"
     "\n"
     "  --report   (cuda) the lowering report on stderr: launch geometry, loops\n"
     "             run in the thread, implicit initializations, memory placement\n"
     "  --ptx      (cuda) compile with NVRTC and print the PTX\n"
     "  --bind thread|serial  (tir) B loops as T.thread_binding (default) or\n"
     "             T.serial (for TVM's llvm target)\n"
     "  --blocks   (tir) one T.sblock per equation with T.axis.remap\n"
     "  --global-scope  (tir) every intermediate in global scope\n"
     "\n"
     "Example:\n"
     "  leir lower --to c matmul.leir > matmul.c\n"
     "  leir lower --to cuda --report softmax.leir.yaml\n"
     "\n"
     "  --check-bounds   bounds-check every access at run time (c)\n"
     "  --threads N      OpenMP threads the code is generated for (c; default:\n"
     "                   all CPUs)\n"
     "  --input NAME:DTYPE:SHAPE, --output NAME:DTYPE:SHAPE\n"
     "                   declare the signature (else: a .leir.yaml file's, or inferred)\n",
     cmd_lower},
    {"run", "run [--backend B] [--seed N] [--set K] [--print N] [--inputs DIR] [--outputs DIR] [--json] IN",
     "Runs a program once on seeded inputs (input set K of seed N, as leir verify\n"
     "generates them) and prints, per output, an XXH3 checksum of its bytes, the\n"
     "sum, min and max of its values and the number of NaNs, then the time of one\n"
     "run of the kernel. Exit status 1 when the program is invalid or fails at run\n"
     "time.\n"
     "\n"
     "  --set K          input set (0 normal, 1 normal x 10, 2 uniform [-1,1], ...)\n"
     "  --print N        also print the first N elements of every output\n"
     "  --inputs DIR     read every input from DIR/NAME.npy instead (numpy format\n"
     "                   1.0, little-endian, C order, the declared dtype and shape)\n"
     "  --outputs DIR    write every output to DIR/NAME.npy\n"
     "\nShared options:\n" RUN_OPTS_HELP,
     cmd_run},
    {"verify", "verify [--backend B] [--seed N] [--json] [OPTIONS] BEFORE AFTER",
     "Runs BEFORE (the reference) and AFTER (the candidate) on the same backend with\n"
     "the same seeded inputs and compares every output (docs/verification.md):\n"
     "EQUAL (bitwise), CLOSE (within tolerance), MISMATCH, INVALID (a static check\n"
     "failed), COMPILE_ERROR, RUNTIME_ERROR, TIMEOUT or INCONCLUSIVE (the reference's\n"
     "outputs are mostly NaN/inf on every set). The candidate is checked\n"
     "against the reference's signature. Exit status 0 for EQUAL and CLOSE, 1 for\n"
     "the other verdicts, 3 when the backend cannot run.\n"
     "\n"
     "  --sets K         input sets (default 3)\n"
     "  --rtol X, --atol X\n"
     "                   tolerance for float outputs (default by dtype)\n"
     "  --reference-rule the Step-TP reference's pass rule instead of the tolerance\n"
     "  --class C        the candidate's class: any (default: the tolerance), exact\n"
     "                   (must be EQUAL) or reassociating (judged against the f64\n"
     "                   truth; `leir ground` prints a step's class)\n"
     "  --strict-parallel\n"
     "                   a P/V/B loop whose iterations are not independent is\n"
     "                   INVALID (by default it runs sequentially and is noted)\n"
     "\n"
     "Example:\n"
     "  leir verify --backend interp --seed 7 before.leir after.leir\n"
     "\nShared options:\n" RUN_OPTS_HELP,
     cmd_verify},
    {"bench", "bench [--backend B] [--runs N] [--min-time S] [--json] IN...",
     "Times programs with the protocol of docs/verification.md: warm-up runs, then\n"
     "rounds of one timed run per program in alternation (caches flushed before\n"
     "each), until every program has --runs runs and --min-time seconds. Prints\n"
     "the median, min and max, GFLOP/s and GB/s counted from the program, and the\n"
     "speedup of each program over the first (same process, same rounds), with\n"
     "the interquartile range (IQR %, '!' when above 10%: noisy) and the threads.\n"
     "\n"
     "  --compare        two programs: is the first faster than the second? Paired\n"
     "                   rounds until a 99% confidence interval of the time ratio\n"
     "                   decides (faster, slower, as fast) or 400 rounds (undecided)\n"
     "  --warmup N       untimed runs per program first (default 3)\n"
     "  --runs N         timed runs per program, at least (default 10)\n"
     "  --max-runs N     timed runs per program, at most (default 10000)\n"
     "  --min-time S     timed seconds per program, at least (default 0.05)\n"
     "  --max-time S     stop adding rounds after S seconds (default 60)\n"
     "  --no-flush       do not flush the caches between runs\n"
     "\nShared options:\n" RUN_OPTS_HELP,
     cmd_bench},
    {"workloads", "workloads list|show NAME|emit NAME [--args A,B,...] [--shape S] [--seed N] [--dtype D]",
     "The workload catalogue (the 202 Step-TP workloads, one YAML file each;\n"
     "docs/workloads.md). The directory is --dir DIR, else $LEIR_WORKLOADS_DIR,\n"
     "else the installed DATADIR/leir/workloads.\n"
     "\n"
     "  list            one line per workload: level/name, reference index, summary\n"
     "                  (--json: one object per workload)\n"
     "  show NAME       parameters (in --args order) with defaults, small values and\n"
     "                  sampling ranges, and the LEIR template\n"
     "  emit NAME       a program file (*.leir.yaml: signature, input domains,\n"
     "                  program) at the chosen shape; --leir prints the bare program\n"
     "\n"
     "  --shape S       default (the reference's default shape), small (f64, runs\n"
     "                  in milliseconds), random (integers from the sampling ranges)\n"
     "  --seed N        seed of --shape random\n"
     "  --args A,B,...  the first parameters, in the reference's order (the\n"
     "                  corpus's shape_args); the rest come from --shape\n"
     "  --dtype D       floating dtype (default: f64 for small, else the workload's)\n"
     "\n"
     "Example:\n"
     "  leir workloads emit level1/softmax --args 2,8 --dtype f64\n",
     cmd_workloads},
    {"optimize", "optimize [--search ALGO] [--policy P | --endpoint URL | --llm-command CMD] [--samples N] [--db FILE] [--trajectory FILE] [--plot FILE.svg] [--out FILE] IN",
     "Searches for a faster program: greedy, beam, BFS, DFS, MCTS or chain search\n"
     "over single steps (docs/search.md). A step is accepted only when verification\n"
     "against the source program says EQUAL or CLOSE and a paired timing comparison\n"
     "says it is faster than its parent at the stated confidence. Prints one line\n"
     "per evaluated proposal (the trajectory), a summary with the best program's\n"
     "speedup measured side by side with the source, its steps and its text.\n"
     "\n"
     "  --search ALGO    greedy (default), beam, bfs, dfs, mcts, chain\n"
     "  --policy P       cost (default: ranked by the cost model), exhaustive, random\n"
     "  --samples N      proposals evaluated, at most (default 100; 0 = no limit)\n"
     "  --time S         wall-time budget in seconds (default none)\n"
     "  --depth N        steps from the source, at most (default 8)\n"
     "  --width N        beam width (default 2)\n"
     "  --branching N    proposals per expansion (default 4; mcts and chain: 1)\n"
     "  --retries N      external policies: calls in a row with nothing accepted\n"
     "                   before a node is given up (default 3)\n"
     "  --uct C          MCTS exploration constant (default 1.414)\n"
     "  --rollouts N     MCTS: random one-step continuations per new node (default 0)\n"
     "  --reward R       MCTS reward: log (log speedup, default) or reference\n"
     "  --policy-seed N  seed of the random policy and the rollouts (default 1)\n"
     "  --all-divisors   splits and tilings offer every divisor (default: up to sqrt(n))\n"
     "  --vector-width W widest loop loop_vectorization may mark V (default 8)\n"
     "  --endpoint URL   the LLM policy: an OpenAI-compatible chat-completions URL\n"
     "                   (e.g. http://127.0.0.1:8000/v1/chat/completions)\n"
     "  --model NAME     the endpoint's model (default \"default\")\n"
     "  --api-key-env V  environment variable holding the endpoint's API key\n"
     "  --llm-command C  the LLM policy: a command (run with /bin/sh -c) speaking\n"
     "                   JSON lines on stdin/stdout (docs/llm.md)\n"
     "  --llm-timeout S  per request to the model (default 300)\n"
     "  --rounds N, --max-rounds N, --compare-time S, --confidence X, --min-effect X\n"
     "                   the timing comparison (defaults 10, 400, 20, 0.99, 0.02)\n"
     "  --no-flush       do not flush caches between timed runs\n"
     "  --sets K         input sets of the verification (default 3)\n"
     "  --db FILE        measurement database (default $LEIR_DB, else\n"
     "                   ~/.cache/leir/measurements.db); --no-db: none\n"
     "  --trajectory F   the trajectory as JSONL (one object per proposal)\n"
     "  --plot F.svg     best speedup against samples\n"
     "  --out F          the best program (.leir.yaml: a program file)\n"
     "  --cot            print each accepted step's chain of thought\n"
     "  --quiet          only the summary; --no-progress: no progress bar\n"
     "  --no-final-compare  skip the side-by-side timing of best and source\n"
     "  --json           the trajectory as JSONL on stdout, then a summary object\n"
     "\nShared options:\n" RUN_OPTS_HELP,
     cmd_optimize},
    {"db", "db export|count|check [--db FILE]",
     "The measurement database of leir optimize (SQLite; default $LEIR_DB, else\n"
     "~/.cache/leir/measurements.db).\n"
     "\n"
     "  export   every measurement as one JSON object per line, oldest first\n"
     "  count    the number of measurements\n"
     "  check    SQLite's integrity check (prints ok)\n",
     cmd_db},
    {"dataset", "dataset build CONFIG.yaml [--out DIR] [--shard K/N] [--json]",
     "Builds a Step-TP dataset from the YAML config (docs/dataset.md): sources\n"
     "(workloads x shapes x dtypes, or a JSONL of programs), states from seeded\n"
     "random walks, one-step candidates of every enabled strategy, verification,\n"
     "chain of thought, the reference's filtering and balancing. Writes\n"
     "train.jsonl, eval.jsonl, archive.jsonl, rejections.jsonl, summary.json,\n"
     "README.md (dataset card) and SVG histograms into DIR. Finished units are\n"
     "kept under DIR/.work: an interrupted build resumes when run again.\n"
     "\n"
     "  --out DIR            output directory (default: CONFIG without .yaml)\n"
     "  --shard K/N          build only units K, K+N, ...; the outputs are written\n"
     "                       by the run that finishes the last unit\n"
     "  --workloads-dir DIR  the workload catalogue (default: the config's, else\n"
     "                       $LEIR_WORKLOADS_DIR, else the installed one)\n"
     "  --json               print summary.json on standard output\n"
     "\n"
     "A progress bar with rate and ETA goes to standard error when it is a terminal.\n",
     cmd_dataset},
    {"eval", "eval ANSWERS.jsonl --dataset DIR [--json] [--json-out FILE] [--backend B]",
     "Scores a model's answers to a dataset's prompts: parse rate, pass-equal\n"
     "(bitwise), pass-close, grounded rate (the answer is one step of the\n"
     "strategy it names), overall, per strategy and per level. ANSWERS has one\n"
     "JSON object per line with the prompt's \"id\" and the model's text as\n"
     "\"answer\" (or \"response\", \"output\", \"content\", \"messages\").\n"
     "Every malformed answer is scored with a reason.\n"
     "\n"
     "  --json           the report as JSON (with one entry per answer)\n"
     "  --json-out FILE  also write the JSON report to FILE\n"
     "  --backend B      interp, cpu, cuda or auto (default)\n"
     "  --seed N         verification input seed (default 1)\n",
     cmd_eval},
};

const size_t tool_command_count = sizeof tool_commands / sizeof tool_commands[0];

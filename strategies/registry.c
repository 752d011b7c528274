/*
 * The catalogue of the 44 strategies (spec/strategies.md §2): index, name,
 * level, summary, the definition sentence that opens a CoT, the benefit
 * sentence that closes it, and the implementation (NULL until built).
 */
#include <string.h>

#include "engine.h"
#include "error.h"

#define G LEIR_LEVEL_GRAPH
#define O LEIR_LEVEL_OPERATOR
#define M LEIR_LEVEL_MEMORY
#define X LEIR_LEVEL_MATH

const leir__strategy leir__strategies[LEIR_STRATEGY_COUNT] = {
    {{0, "operator_fusion", G,
     "put consecutive equations from nests with identical loops into one nest",
     "Operator fusion merges consecutive expressions that share the same loop nest into one "
     "expression.",
     "Fusing removes a pass over memory and a kernel launch, and keeps the intermediate values "
     "close to the computation.", 0}, NULL},
    {{1, "operator_fission", G, "split a multi-equation nest into one nest per equation",
     "Operator fission splits an expression with several equations into one expression per "
     "equation.",
     "Smaller expressions can be scheduled independently, each with the loop order and "
     "parallelization that suits it.", 0}, NULL},
    {{2, "compute_inline", G, "substitute a single-use producer equation into its consumer",
     "Compute inline substitutes the defining expression of a single-use intermediate into the "
     "expression that consumes it.",
     "Inlining removes the intermediate buffer and the memory traffic to write and read it.", 0}, NULL},
    {{3, "expression_splitting", G,
     "split one equation into a producer of a sub-expression and a consumer",
     "Expression splitting moves one sub-expression of an equation into its own expression that "
     "produces an intermediate.",
     "A separate sub-expression can be computed once, scheduled on its own, or reused.", 0}, NULL},
    {{4, "tensor_concat_to_fuse_operators", G,
     "concatenate inputs of similar nests, compute once, split the output",
     "Tensor concatenation fuses two similar operators by concatenating their inputs, computing "
     "once, and splitting the result.",
     "One larger operator uses the hardware better than two small ones and needs one launch.", 0}, NULL},
    {{5, "tensor_split_to_decouple_operators", G,
     "split an input along an axis, compute parts, concatenate outputs",
     "Tensor splitting decouples an operator into parts that each work on a slice of the input, "
     "then combines the partial outputs.",
     "Independent parts can run concurrently and each works on a smaller, cache-friendly slice.", 0}, NULL},
    {{6, "common_subexpression_elimination", G,
     "compute a repeated sub-expression once into a temporary",
     "Common subexpression elimination computes a repeated sub-expression once and reuses the "
     "result.",
     "Computing a value once saves the repeated arithmetic and memory reads.", 0}, NULL},
    {{7, "dead_code_elimination", G, "remove nests whose results are never used",
     "Dead code elimination removes expressions whose results never reach an output.",
     "Removing unused work saves its computation and memory traffic.", 0}, NULL},
    {{8, "expression_reorder", G, "swap adjacent independent nests",
     "Expression reorder swaps two adjacent expressions that do not depend on each other.",
     "A different order can bring a producer next to its consumer and improve reuse of data "
     "that is still in cache.", 0}, NULL},
    {{9, "loop_reorder", O, "permute two loops of a nest",
     "Loop reorder exchanges the nesting order of two loops of an expression.",
     "A better loop order makes the innermost loop walk memory contiguously and improves "
     "locality.", 1}, &leir__loop_reorder},
    {{10, "loop_tiling", O, "tile two adjacent loops (two splits + reorder: four loops)",
     "Loop tiling splits two adjacent loops into outer tile loops and inner intra-tile loops, "
     "and moves the tile loops outside.",
     "Tiling keeps a block of data in cache or shared memory while it is reused, which "
     "improves locality.", 1}, &leir__loop_tiling},
    {{11, "loop_split", O, "split one loop into outer x inner",
     "Loop split divides one loop into an outer loop and an inner loop whose extents multiply "
     "to the original extent.",
     "Splitting exposes an inner loop of a chosen size for vectorization, unrolling, binding or "
     "tiling.", 1}, &leir__loop_split},
    {{12, "loop_fusion", O, "merge two adjacent loops of a nest into one (inverse of split)",
     "Loop fusion merges two adjacent loops whose variables are only used together as "
     "outer*extent+inner into one loop.",
     "One longer loop has less loop overhead and gives more iterations to parallelize or "
     "vectorize.", 1}, &leir__loop_fusion},
    {{13, "loop_unrolling", O, "mark a loop U",
     "Loop unrolling replicates the body of a loop so that its iterations run without loop "
     "control.",
     "Unrolling removes branch and counter overhead and exposes instruction-level parallelism.", 1}, &leir__loop_unrolling},
    {{14, "loop_parallelization", O, "mark a loop P",
     "Loop parallelization runs the independent iterations of a loop on several processing "
     "units.",
     "Parallel iterations use several cores at once.", 1}, &leir__loop_parallelization},
    {{15, "loop_vectorization", O, "mark a (small, innermost-capable) loop V",
     "Loop vectorization executes the iterations of a short independent loop with SIMD "
     "instructions.",
     "SIMD instructions process several elements per instruction.", 1}, &leir__loop_vectorization},
    {{16, "loop_binding", O, "bind a loop to a GPU thread/block axis (B, renamed tx.../bx...)",
     "Loop binding maps the iterations of an independent loop to a GPU thread or block axis.",
     "Bound iterations run concurrently on the GPU's threads and blocks.", 1}, &leir__loop_binding},
    {{17, "reduction_factorization", O, "split a reduction axis into partial reductions, then combine",
     "Reduction factorization splits a reduction axis into two ranges that are reduced into "
     "separate partial results, then combines the partial results.",
     "Partial reductions are independent of each other and can run in parallel before a short "
     "combining step.", 1}, &leir__reduction_factorization},
    {{18, "cache_read_write", M, "stage an input (read) or the output (write) through a copy in s/l",
     "Cache read/write stages a tensor through a copy in faster shared or local memory, reading "
     "it in before use or writing results back after.",
     "Repeated accesses then hit fast on-chip memory instead of global memory.", 1}, &leir__cache_read_write},
    {{19, "layout_transformation", M,
     "copy an input into a new layout (transpose/flatten/reshape) and read that",
     "Layout transformation copies a tensor into a new memory layout and reads the copy "
     "instead.",
     "A layout that matches the access order makes memory accesses contiguous.", 1}, &leir__layout_transformation},
    {{20, "set_storage_scope", M, "change an intermediate's scope letter (g/s/l)",
     "Set storage scope places an intermediate tensor in global, shared or local memory.",
     "Keeping an intermediate in shared or local memory avoids slow global-memory traffic.", 1}, &leir__set_storage_scope},
    {{21, "set_storage_layout", M, "change an intermediate's layout in all its accesses",
     "Set storage layout changes the memory layout of an intermediate tensor in every access.",
     "A layout that matches the access order makes memory accesses contiguous.", 1}, &leir__set_storage_layout},
    {{22, "precompute_indices", M,
     "store a compound index expression in an i64 table and index through it",
     "Precompute indices stores a compound index expression in an integer table and indexes "
     "through the table.",
     "The index arithmetic is done once instead of at every access.", 1}, &leir__precompute_indices},
    {{23, "factorization", X, "factor an equation's right side",
     "Factorization rewrites an equation's right side as a product of factors.",
     "A factored form can need fewer operations.", 0}, NULL},
    {{24, "expand_factorization", X, "expand a factored right side (inverse of 23)",
     "Expand factorization multiplies out a factored right side.",
     "An expanded form can expose terms that fuse or cancel with others.", 0}, NULL},
    {{25, "cancellation", X, "cancel common factors of a fraction",
     "Cancellation removes common factors of a fraction's numerator and denominator.",
     "Cancelled fractions need fewer operations.", 0}, NULL},
    {{26, "expand_cancellation", X, "inverse of 25",
     "Expand cancellation multiplies a fraction's numerator and denominator by a common factor.",
     "A common denominator can enable further rewrites that save operations.", 0}, NULL},
    {{27, "apart", X, "partial-fraction decomposition (inverse of 28)",
     "Apart decomposes a fraction into a sum of partial fractions.",
     "Simpler fractions can be cheaper or numerically better behaved.", 0}, NULL},
    {{28, "together", X, "combine fractions over a common denominator",
     "Together combines a sum of fractions over a common denominator.",
     "One division instead of several saves expensive operations.", 0}, NULL},
    {{29, "powsimp", X, "combine powers/exponentials (exp(a)*exp(b) -> exp(a+b))",
     "Powsimp combines products of powers and exponentials with equal bases.",
     "Fewer exponentials save expensive transcendental operations.", 0}, NULL},
    {{30, "expand_powsimp", X, "inverse of 29",
     "Expand powsimp splits a power or exponential of a sum into a product.",
     "Separate factors can be computed once and reused.", 0}, NULL},
    {{31, "expand_log", X, "split logs: log(a*b) -> log(a)+log(b)",
     "Expand log splits the logarithm of a product into a sum of logarithms.",
     "Separate logarithms can be computed once and reused.", 0}, NULL},
    {{32, "logsimp", X, "combine logs: log(a)+log(b) -> log(a*b)",
     "Logsimp combines a sum of logarithms into the logarithm of a product.",
     "One logarithm instead of several saves expensive operations.", 0}, NULL},
    {{33, "collect", X, "collect like terms (a*b+a*c -> a*(b+c))",
     "Collect gathers terms that share a common factor.",
     "Factoring out a common term saves multiplications.", 0}, NULL},
    {{34, "expand_collect", X, "inverse of 33",
     "Expand collect distributes a common factor over a sum.",
     "Distributed terms can fuse with neighbouring operations.", 0}, NULL},
    {{35, "partially_equivalent_then_correct", X,
     "fuse similar nests by concatenation, then add a correcting nest",
     "Partially equivalent then correct fuses similar computations by concatenation and "
     "corrects the elements where they differ.",
     "One fused computation plus a small correction beats two separate passes.", 0}, NULL},
    {{36, "normal_loop_max_to_prefix_max", X, "turn a max reduction into a running (prefix) max",
     "Normal loop max to prefix max turns a max reduction into a running maximum.",
     "A running maximum can be fused with the computations that consume it in one pass.", 0}, NULL},
    {{37, "exponential_split", X, "exp(x) -> exp(x-y)*exp(y) with an existing y",
     "Exponential split rewrites exp(x) as exp(x-y)*exp(y) with an existing value y.",
     "The split prepares online, numerically stable rescaling.", 0}, NULL},
    {{38, "multiplicative_split", X, "x -> (x/y)*y with an existing y",
     "Multiplicative split rewrites x as (x/y)*y with an existing value y.",
     "The split prepares a rescaled, streaming form of the computation.", 0}, NULL},
    {{39, "additive_split", X, "x -> (x-y)+y with an existing y",
     "Additive split rewrites x as (x-y)+y with an existing value y.",
     "The split prepares a shifted, streaming form of the computation.", 0}, NULL},
    {{40, "normal_loop_summation_on_exp_to_prefix_summation_on_exp", X,
     "running sum of exp with rescaling by the running max",
     "Prefix summation on exp turns a sum of exponentials after a max into one pass with a "
     "running maximum and a rescaled running sum.",
     "One pass instead of two halves the reads of the input.", 0}, NULL},
    {{41, "online_softmax", X, "softmax in one pass with running max and sum",
     "Online softmax computes the softmax normalizers in one pass with a running maximum and a "
     "rescaled running sum.",
     "One pass over the input saves memory traffic.", 0}, NULL},
    {{42, "flashattention_wo_tiling", X,
     "attention with online softmax fused into the P.V product (nested nest)",
     "Flash attention without tiling fuses the online softmax into the product with V so the "
     "attention matrix is never stored.",
     "The attention matrix never goes to memory, which saves most of the memory traffic.", 0}, NULL},
    {{43, "normal_matmul_to_prefix_matmul_based_on_online_softmax", X,
     "matmul after softmax as a running, rescaled accumulation",
     "Prefix matmul based on online softmax turns the product with the softmax output into a "
     "running, rescaled accumulation.",
     "The softmax output never goes to memory, which saves memory traffic.", 0}, NULL},
};

#undef G
#undef O
#undef M
#undef X

const char *leir_level_name(leir_level level) {
  switch (level) {
    case LEIR_LEVEL_GRAPH: return "graph";
    case LEIR_LEVEL_OPERATOR: return "operator";
    case LEIR_LEVEL_MEMORY: return "memory";
    case LEIR_LEVEL_MATH: return "math";
  }
  return "";
}

const char *leir_exactness_name(leir_exactness exactness) {
  return exactness == LEIR_REASSOCIATING ? "reassociating" : "exact";
}

size_t leir_strategy_count(void) { return LEIR_STRATEGY_COUNT; }

const leir_strategy_info *leir_strategy_info_at(size_t index) {
  return index < LEIR_STRATEGY_COUNT ? &leir__strategies[index].info : NULL;
}

int leir__strategy_index(const char *name, size_t len) {
  for (int i = 0; i < LEIR_STRATEGY_COUNT; i++)
    if (strlen(leir__strategies[i].info.name) == len && memcmp(leir__strategies[i].info.name, name, len) == 0)
      return i;
  return -1;
}

/* Length of the common prefix, for "did you mean" hints. */
static size_t common_prefix(const char *a, const char *b) {
  size_t n = 0;
  while (a[n] && a[n] == b[n]) n++;
  return n;
}

leir_status leir__strategy_unknown(const char *name, size_t len) {
  char buf[128];
  size_t n = len < sizeof buf - 1 ? len : sizeof buf - 1;
  memcpy(buf, name, n);
  buf[n] = '\0';
  size_t best = 0, best_len = 0;
  for (size_t i = 0; i < LEIR_STRATEGY_COUNT; i++) {
    size_t c = common_prefix(buf, leir__strategies[i].info.name);
    if (c > best_len) best = i, best_len = c;
  }
  if (best_len >= 4)
    return leir__error(LEIR_ERR_NOT_FOUND, "strategy.unknown", buf, 0, 0,
                       "unknown strategy '%s' (did you mean '%s'? 'leir strategies' lists all)",
                       buf, leir__strategies[best].info.name);
  return leir__error(LEIR_ERR_NOT_FOUND, "strategy.unknown", buf, 0, 0,
                     "unknown strategy '%s' ('leir strategies' lists all)", buf);
}

leir_status leir_strategy_find(const char *name, size_t *index) {
  if (!name || !index) return leir__error(LEIR_ERR_ARGUMENT, "argument", NULL, 0, 0, "NULL argument");
  int i = leir__strategy_index(name, strlen(name));
  if (i < 0) return leir__strategy_unknown(name, strlen(name));
  *index = (size_t)i;
  return LEIR_OK;
}

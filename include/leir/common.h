/**
 * @file
 * libleir — common definitions: versions, status codes, the last-error
 * record, dtypes and memory release.
 *
 * Conventions used by every libleir header:
 *  - Every fallible call returns `leir_status` (0 = LEIR_OK, negative = error).
 *    Details of the most recent failure on the calling thread are available from
 *    leir_error_last(); reporting never allocates.
 *  - Handles are opaque. A handle is not shared between threads without external
 *    locking; distinct handles are independent. The exception is a program:
 *    any number of threads may call the functions that take it as
 *    `const leir_program *` at once, while none modifies it (docs/api.md,
 *    "Threads and global state"; tests/test_threads.c under ThreadSanitizer).
 *  - Ownership is written on each function: "borrowed" (valid as long as the
 *    owning handle lives and is not modified), "copied" (the library keeps its
 *    own copy), or "caller frees with leir_free()" / a type-specific _free.
 *  - Strings are UTF-8 and NUL-terminated; large texts also carry lengths.
 */
#ifndef LEIR_COMMON_H
#define LEIR_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ----- export macro ---------------------------------------------------- */
#if defined(LEIR_BUILDING_LIBRARY) && defined(__GNUC__)
#define LEIR_API __attribute__((visibility("default")))
#else
#define LEIR_API
#endif

/* Marks a deprecated alias (docs/abi.md, "Names and deprecated aliases"):
 * still exported with its old meaning for the whole major version. Define
 * LEIR_WARN_DEPRECATED before including a header to get a compiler warning
 * where one is used. */
#if defined(LEIR_WARN_DEPRECATED) && defined(__GNUC__)
/** Expands to GCC's deprecated attribute naming `replacement` (added in 0.2.0). */
#define LEIR_DEPRECATED(replacement) __attribute__((deprecated("use " replacement)))
#else
/** Expands to nothing unless LEIR_WARN_DEPRECATED is defined (added in 0.2.0). */
#define LEIR_DEPRECATED(replacement)
#endif

/* ----- versions -------------------------------------------------------- */
/* "Added in MAJOR.MINOR.PATCH" in a header names the LEIR_VERSION_STRING of
 * the first release whose headers have the declaration or field, so
 * leir_version_number() >= that version tells a caller the library reads it.
 * Everything recorded in the first ABI baseline (abi/libleir.abi.xml) is
 * 0.1.0, fields appended before that release included. A later addition is
 * written with the next release's version, and the same change raises
 * LEIR_VERSION_MINOR here and the version in meson.build
 * (tests/symbol_versions_test.sh: no "Added in" later than this version). */
/** Library major version: same major = ABI compatible (docs/abi.md). */
#define LEIR_VERSION_MAJOR 0
/** Library minor version: new functions, compatible additions. */
#define LEIR_VERSION_MINOR 2
/** Library patch version: fixes only. */
#define LEIR_VERSION_PATCH 0
/** The version as text, "MAJOR.MINOR.PATCH". */
#define LEIR_VERSION_STRING "0.2.0"
/** The version as one number, MAJOR * 10000 + MINOR * 100 + PATCH. */
#define LEIR_VERSION_NUMBER \
  (LEIR_VERSION_MAJOR * 10000 + LEIR_VERSION_MINOR * 100 + LEIR_VERSION_PATCH)
/** Version of the LEIR text language (spec/leir.md), independent of the library. */
#define LEIR_LANGUAGE_VERSION 1

/** Library version string of the loaded library ("0.2.0"); static storage. */
LEIR_API const char *leir_version(void);
/** LEIR_VERSION_NUMBER of the loaded library. */
LEIR_API int leir_version_number(void);

/* ----- status codes ---------------------------------------------------- */
/** One table generates the enum, the names and the messages:
 * X(NAME, VALUE, MESSAGE) for each status LEIR_NAME. */
#define LEIR_STATUS_TABLE(X)                                                   \
  X(OK, 0, "success")                                                          \
  X(ERR_PARSE, -1, "malformed LEIR text")                                      \
  X(ERR_INVALID, -2, "program failed a static check")                          \
  X(ERR_ARGUMENT, -3, "invalid argument")                                      \
  X(ERR_NOMEM, -4, "out of memory")                                            \
  X(ERR_IO, -5, "input/output error")                                          \
  X(ERR_LIMIT, -6, "a configured limit was exceeded")                          \
  X(ERR_SIGNATURE, -7, "missing, ambiguous or inconsistent signature")         \
  X(ERR_NOT_APPLICABLE, -8, "the strategy does not apply")                     \
  X(ERR_COMPILE, -9, "the backend compiler rejected the lowered code")         \
  X(ERR_RUNTIME, -10, "the program failed while running")                      \
  X(ERR_TIMEOUT, -11, "the time limit was exceeded")                           \
  X(ERR_NO_DEVICE, -12, "no device available for this backend")               \
  X(ERR_UNSUPPORTED, -13, "not supported by this build or backend")            \
  X(ERR_NOT_FOUND, -14, "not found")                                           \
  X(ERR_CANCELLED, -15, "cancelled")                                           \
  X(ERR_INTERNAL, -16, "internal error")

/** Result of every fallible call: LEIR_OK (0) or a negative error code
 * (LEIR_STATUS_TABLE lists them with their messages). Later versions may add
 * codes: treat any unknown negative value as an error. */
typedef enum leir_status {
#define LEIR_STATUS_ENUM_ENTRY(name, value, msg) LEIR_##name = value,
  LEIR_STATUS_TABLE(LEIR_STATUS_ENUM_ENTRY)
#undef LEIR_STATUS_ENUM_ENTRY
} leir_status;

/** "LEIR_ERR_PARSE" etc.; static storage; "LEIR_UNKNOWN_STATUS" if unknown. */
LEIR_API const char *leir_status_name(leir_status status);
/** One-line description of a status; static storage. */
LEIR_API const char *leir_status_message(leir_status status);

/* ----- last error ------------------------------------------------------ */
/** Details of the most recent failure on the calling thread. Text fields are
 * never NULL (empty when unknown). `line`/`column` are 1-based, 0 = unknown.
 * `rule` names the violated rule ("parse.expected", "check.bounds", ...);
 * `subject` names the tensor, loop, strategy or file concerned.
 *
 * The record describes the last *failure*, not the last call: a call that
 * succeeds leaves it as it was (and may even have recorded, then recovered
 * from, an internal failure). So read it only right after a call returned
 * an error status, and trust it only when its `status` equals that returned
 * status. A binding that wants no doubt clears the record (leir_error_clear)
 * before each call, or compares leir_error_sequence() before and after
 * the call: a record whose sequence did not change was not written by the
 * call. */
typedef struct leir_error {
  leir_status status;  /**< of the recorded failure; LEIR_OK after leir_error_clear() or when nothing was recorded */
  const char *message; /**< one sentence, without a position prefix */
  const char *rule;    /**< the violated rule, "" when none applies */
  const char *subject; /**< tensor, loop, strategy, file or argument concerned, or "" */
  uint32_t line;       /**< 1-based line in the input; 0 = unknown */
  uint32_t column;     /**< 1-based column in the input; 0 = unknown */
} leir_error;

/** Borrowed: valid until the next libleir call on this thread. Never NULL;
 * status is LEIR_OK when no error was recorded since leir_error_clear(). */
LEIR_API const leir_error *leir_error_last(void);
/** Resets the calling thread's last error to status LEIR_OK, empty texts,
 * line 0 (other threads are not affected; the sequence keeps counting).
 * Never fails. */
LEIR_API void leir_error_clear(void);
/** Sequence number of the record: the number of errors recorded on this
 * thread when it was written (0 before the first). A call that leaves it
 * unchanged did not write the record, whatever the record says. Never fails. */
LEIR_API uint64_t leir_error_sequence(void);

/* ----- memory ---------------------------------------------------------- */
/** Releases memory the library returned with "caller frees with leir_free".
 * NULL is a no-op. */
LEIR_API void leir_free(void *ptr);

/* ----- element types --------------------------------------------------- */
/** Element type of a tensor (the superscript in LEIR text, `f64` etc.). */
typedef enum leir_dtype {
  LEIR_F16 = 0,    /**< IEEE binary16, exchanged as uint16_t bit patterns */
  LEIR_BF16,       /**< bfloat16, exchanged as uint16_t bit patterns */
  LEIR_F32,        /**< float */
  LEIR_F64,        /**< double */
  LEIR_I8,         /**< int8_t */
  LEIR_I16,        /**< int16_t */
  LEIR_I32,        /**< int32_t */
  LEIR_I64,        /**< int64_t */
  LEIR_U8,         /**< uint8_t */
  LEIR_BOOL,       /**< one byte holding 0 or 1 */
  LEIR_DTYPE_COUNT /**< number of dtypes in this version (grows when one is added) */
} leir_dtype;

/** "f16", "bf16", ...; static storage; NULL for an invalid value. */
LEIR_API const char *leir_dtype_name(leir_dtype dtype);
/** Parses "f32" etc. into *out. Errors: LEIR_ERR_ARGUMENT for NULL or an
 * unknown name (the last error names it). */
LEIR_API leir_status leir_dtype_from_name(const char *name, leir_dtype *out);
/** Bytes per element in memory (bool is 1). 0 for an invalid value. */
LEIR_API size_t leir_dtype_size(leir_dtype dtype);

/** Memory scope of a tensor (a placement hint; never changes values). */
typedef enum leir_scope {
  LEIR_SCOPE_GLOBAL = 0, /**< `g`: device or host memory */
  LEIR_SCOPE_SHARED,     /**< `s`: shared by the threads of a block */
  LEIR_SCOPE_LOCAL       /**< `l`: private to one thread */
} leir_scope;

#ifdef __cplusplus
}
#endif
#endif /* LEIR_COMMON_H */

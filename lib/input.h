/* Untrusted input files and documents, the same way in every reader:
 * a bounded read of a regular file, and the YAML guards run before libyaml
 * builds a document. */
#ifndef LEIR_INPUT_INTERNAL_H
#define LEIR_INPUT_INTERNAL_H

#include <stddef.h>

#include "leir/common.h"

/* Reads the whole of `path` into a NUL-terminated buffer (caller frees)
 * when it is a regular file of at most `max` bytes. The file is opened
 * with O_NONBLOCK, so a FIFO or a device never blocks the open, and
 * anything that is not a regular file (FIFO, device, socket, directory)
 * is refused before a byte is read; a file that grows past `max` while it
 * is read is refused too. `rule` names the error (e.g. "dataset.io").
 * LEIR_ERR_NOT_FOUND (no such file), LEIR_ERR_IO (not a regular file, a
 * read error), LEIR_ERR_LIMIT (larger than `max`), LEIR_ERR_NOMEM. */
leir_status leir__read_regular_file(const char *path, size_t max, const char *rule, char **out,
                                    size_t *len);

/* The checks every YAML reader makes before libyaml loads a document
 * (lib/yaml.c): the running balance of '[' and '{' stays at most 1000 (the
 * scanner is quadratic in open flow collections), collections nest at most
 * `max_depth` deep, the text holds one document, and no syntax error. `what`
 * names the input in messages ("a dataset config"). */
leir_status leir__yaml_guard(const char *text, size_t len, int max_depth, const char *what);

#endif

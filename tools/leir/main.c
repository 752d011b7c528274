/* leir: the command-line face of libleir (design.md, "The leir tool"). */
#include <stdio.h>
#include <string.h>

#include "commands.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: leir COMMAND [OPTIONS] ...\n"
          "       leir --version | -V | --help | help COMMAND\n"
          "\n"
          "Commands:\n");
  for (size_t i = 0; i < tool_command_count; i++)
    fprintf(f, "  leir %s\n", tool_commands[i].synopsis);
  fprintf(f,
          "\n"
          "Inputs are .leir files, .leir.yaml program files, or - for standard input.\n"
          "Exit status: 0 success, 1 invalid input or failed check, 2 usage error,\n"
          "3 backend or internal error.\n");
}

static const tool_command *find(const char *name) {
  for (size_t i = 0; i < tool_command_count; i++)
    if (strcmp(tool_commands[i].name, name) == 0) return &tool_commands[i];
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return EXIT_USAGE;
  }
  const char *cmd = argv[1];
  for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
    if (strcmp(argv[i], "--json") == 0) tool_json_mode = true;
  if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0 || strcmp(cmd, "version") == 0) {
    printf("leir %s (LEIR language %d)\n", leir_version(), LEIR_LANGUAGE_VERSION);
    return EXIT_OK;
  }
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
    usage(stdout);
    return EXIT_OK;
  }
  if (strcmp(cmd, "help") == 0) {
    if (argc < 3) {
      usage(stdout);
      return EXIT_OK;
    }
    const tool_command *c = find(argv[2]);
    if (!c) {
      fprintf(stderr, "leir: unknown command '%s'\n", argv[2]);
      return EXIT_USAGE;
    }
    printf("usage: leir %s\n\n%s", c->synopsis, c->help);
    return EXIT_OK;
  }
  const tool_command *c = find(cmd);
  if (!c) {
    if (tool_json_mode) return tool_usage_error(cmd, "unknown command '%s'", cmd);
    fprintf(stderr, "leir: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return EXIT_USAGE;
  }
  for (int i = 2; i < argc; i++)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      printf("usage: leir %s\n\n%s", c->synopsis, c->help);
      return EXIT_OK;
    }
  leir_error_clear();
  int rc = c->run(argc - 1, argv + 1);
  if (tool_json_mode && (rc == EXIT_USAGE || rc == EXIT_INTERNAL) && !tool_json_error_printed) {
    /* A failure reported only in words (stderr): still give JSON readers an
     * object, from the library's record when it has one. */
    const leir_error *e = leir_error_last();
    char msg[128];
    snprintf(msg, sizeof msg, "the command failed (exit status %d; details on standard error)", rc);
    leir_error generic = {rc == EXIT_USAGE ? LEIR_ERR_ARGUMENT : LEIR_ERR_INTERNAL, msg,
                          rc == EXIT_USAGE ? "usage" : "internal", "", 0, 0};
    tool_json_fail(NULL, e->status != LEIR_OK ? e : &generic, 0);
  }
  if (fflush(stdout) != 0) return EXIT_INTERNAL;
  return rc;
}

/* leir: the command-line face of libleir (design.md, "The leir tool"). */
#include <stdio.h>
#include <string.h>

#include "commands.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: leir COMMAND [OPTIONS] ...\n"
          "       leir --version | --help | help COMMAND\n"
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
  if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
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
    fprintf(stderr, "leir: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return EXIT_USAGE;
  }
  for (int i = 2; i < argc; i++)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      printf("usage: leir %s\n\n%s", c->synopsis, c->help);
      return EXIT_OK;
    }
  int rc = c->run(argc - 1, argv + 1);
  if (fflush(stdout) != 0) return EXIT_INTERNAL;
  return rc;
}
